# contract.mk — generated from contract.json (built_on) by contract.py — do not edit.
# The labs built on other labs, for the Makefile: LAB_BASES_<lab>, the labs a lab's binary
# links, in order; BASE_KEEP_<lab>, the entry points of a base lab's object that stay global.
LAB_BASES_10_applications := 08_decoupled_lookback 07_hierarchical
BASE_KEEP_08_decoupled_lookback := lookback_scan lookback_temp_bytes lookback_tile
BASE_KEEP_07_hierarchical := scan_then_propagate hier_temp_bytes hier_tile
# LAB_EXIT_<code>: what a lab binary's exit code means, in a few words (make run's last line).
LAB_EXIT_0 := correct
LAB_EXIT_1 := wrong (or wrote outside the output / changed the input)
LAB_EXIT_2 := usage error
LAB_EXIT_3 := not implemented yet
LAB_EXIT_4 := CUDA error
LAB_EXIT_5 := no CUDA device
LAB_EXIT_6 := out of memory
LAB_EXIT_7 := n over the lab's limit
LAB_EXIT_8 := the process ended before the harness reported (the lab's code called exit())
LAB_EXIT_9 := the sandbox stopped a system call
