#!/usr/bin/env python3
"""Run a command inside a named environment (env vars and preloaded libraries).

    with_environment.py --name tcmalloc --preload libtcmalloc.so.4 --set KEY=VALUE -- CMD...

Resolves each preload to an absolute path (failing with the package to install when one is
missing), drops inherited allocator knobs the environment does not set, prints what it sets,
and replaces itself with CMD. CMD proves the environment with `knobs.environment.prove()`.
"""

import argparse
import os
import shlex
import sys

from knobs.environment import KnobNotApplied, SPEC_VARIABLE, launch_env


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the environment's name")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--preload", action="append", default=[], metavar="LIBRARY")
    parser.add_argument("command", nargs="+", help="the command to run, after --")
    args = parser.parse_args(argv)
    for item in args.set:
        if "=" not in item:
            parser.error(f"--set {item!r}: expected KEY=VALUE")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    variables = dict(item.split("=", 1) for item in args.set)
    try:
        env = launch_env(args.name, variables, args.preload)
    except KnobNotApplied as error:
        sys.exit(f"with_environment: {error}")
    shown = {k: v for k, v in env.items()
             if k in variables or k == "LD_PRELOAD" or k == SPEC_VARIABLE}
    print(f"with_environment: {args.name}: "
          + " ".join(f"{k}={shlex.quote(v)}" for k, v in shown.items() if k != SPEC_VARIABLE),
          file=sys.stderr, flush=True)
    os.execvpe(args.command[0], args.command, env)


if __name__ == "__main__":
    main()
