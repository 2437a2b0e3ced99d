"""``python -m pluginbench.probe serve --scenario FILE --port N``: serve in the foreground."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from . import load_scenario, serve_forever


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pluginbench.probe")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve a scenario on loopback until interrupted")
    serve.add_argument("--scenario", required=True, help="scenario YAML/JSON file")
    serve.add_argument("--port", type=int, default=0, help="port (0 = any free port)")
    serve.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    serve.add_argument("--log", default=None, help="append every request record to this JSONL")
    args = parser.parse_args(argv)
    try:
        serve_forever(load_scenario(args.scenario), args.port, args.host, log=args.log)
    except InputError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
