"""The static checks: what a lab's scan.cu may not do, found before any of it runs. registry.py lists
every rule (its phase, the evidence it reads, its CPU-mode twin); each phase runs the rules
registered for it.

In the order they run (grader/README.md, "Static checks", says what each refuses; stage_build.py
runs them):
  source.check_source     the text of scan.cu: a quick first pass (size, #line directives, the
                          #include lines written out), before anything is compiled;
  nvcc.Precheck           what nvcc makes of the private copy, around its one compile:
      headers.check_headers          every header the compiler reads (nvcc -M, before it);
      headers.check_line_directives  file names changed by #line (the kept .cpp4.ii, host side);
      asm.check_host_asm             inline assembly in nvcc's host translation (kept .cudafe1.cpp);
      asm.check_device_clocks        clocks read in device code (the kept PTX);
  cpu.source_checks       the same on the C++ CPU mode compiles (no nvcc needed), and what
                          nvcc's compile refuses there: device_calls.host_calls, device code
                          that calls a host function (the host compiler's call graph);
  objects.check_object    the object (elf.py reads it): symbols.check_symbols (the allowlist,
                          shadowing, a kernel), sections.check_startup (code before or after
                          main), sections.check_sections (writable code, executable stack),
                          machine.check_machine_code (system-call instructions, calls through
                          pointers);
  linked.check_binary     the CUDA runtime linked statically.
lexer.py is the C lexer the text checks share; cpu_code.py reads CPU mode's preprocessed C++.
"""
