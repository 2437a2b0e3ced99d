#!/bin/bash
# Upstream installs pytest with uv here; this offline fixture runs the same checks with python3.
set -e
python3 "$TEST_DIR/test_outputs.py"
