"""A tiny stock-keeping package (PluginBench's whole-evaluation quality fixture)."""
