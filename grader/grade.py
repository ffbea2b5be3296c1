#!/usr/bin/env python3
"""Placeholder until the grader lands: builds every lab and runs a few sizes (see issue 5)."""
import sys
print("grader: not written yet", file=sys.stderr)
sys.exit(2)
