"""Writing results: one JSON file per run, written atomically."""

import json
import os
import tempfile


def write_json(path, payload):
    """Write `payload` to `path` through a temporary file and a rename, so a crash or a
    failed knob check never leaves a half-written result that looks like a measurement."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(payload, out, indent=1, sort_keys=True)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
