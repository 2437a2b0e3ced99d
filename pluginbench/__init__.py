"""PluginBench: does a guidance package make a real coding agent do better work?

The public surface is small on purpose: the CLI (`pluginbench`), the configuration
schema (`pluginbench.config`), the event types and log (`pluginbench.events`), and the
projections (`pluginbench.projections`). Everything else is engine detail.
"""

__version__ = "0.1.0"
