# contract.mk — generated from contract.json (built_on) by contract.py — do not edit.
# The labs built on other labs, for the Makefile: LAB_BASES_<lab>, the labs a lab's binary
# links, in order; BASE_KEEP_<lab>, the entry points of a base lab's object that stay global.
LAB_BASES_10_applications := 08_decoupled_lookback 07_hierarchical
BASE_KEEP_08_decoupled_lookback := lookback_scan lookback_temp_bytes lookback_tile
BASE_KEEP_07_hierarchical := scan_then_propagate hier_temp_bytes hier_tile
