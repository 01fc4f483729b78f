"""Result files: one JSON file per measured process, gzip-compressed, written atomically,
with a format version; `read` refuses any other version with a message naming the fix, and
checks the file against config/result.schema.yaml where jsonschema is installed."""

import gzip
import json
import os
import tempfile
import zlib
from pathlib import Path

FORMAT = 2
# One measured process's file in its result set (`rep` its round). Compressed: the shipped
# sets hold thousands, about a quarter of their plain size.
RUN_SUFFIX = ".json.gz"
RUN_FILE = "rep{rep}" + RUN_SUFFIX
GZIP_MAGIC = b"\x1f\x8b"
SCHEMA = Path(__file__).resolve().parents[2] / "config" / "result.schema.yaml"


class ResultError(ValueError):
    """A result file this version of the workflow cannot read as it is."""


class DamagedResult(ResultError):
    """A result file that is not a whole result: not JSON, cut short, or not of the schema."""

    def __init__(self, path, what):
        self.path, self.what = path, what
        super().__init__(f"{path}: damaged result file: {what}. `make run` moves it aside to "
                         f"{os.path.basename(path)}.damaged and measures that process again")


def encoded(payload, path):
    """The bytes of `payload` as the file `path` holds them: JSON, one value per line (so that
    a file cut short is told from one that is not JSON), gzip-compressed where `path` ends in
    .gz, with no time or name in the gzip header: the same result, the same bytes."""
    text = (json.dumps(payload, indent=1, sort_keys=True) + "\n").encode()
    return _gzipped(text) if str(path).endswith(".gz") else text


def _gzipped(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def write_json(path, payload):
    """Write `payload` to `path` through a temporary file and a rename, so a crash or a
    failed knob check never leaves a half-written result that looks like a measurement."""
    _write_whole(path, encoded(payload, path))


def _write_whole(path, data, times_ns=None):
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-",
                                         suffix="".join(Path(path).suffixes))
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if times_ns:
            os.utime(temporary, ns=times_ns)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def compress_plain(root):
    """Compress in place the plain run files (rep<k>.json, as this workflow wrote them before
    it compressed them) under the result set `root`, each file's bytes and times kept; returns
    their count. Nothing is measured again."""
    plain = sorted(Path(root, "runs").rglob(RUN_FILE.format(rep="*").removesuffix(".gz")))
    for path in plain:
        stat = path.stat()
        _write_whole(f"{path}.gz", _gzipped(path.read_bytes()),
                     (stat.st_atime_ns, stat.st_mtime_ns))
        path.unlink()
    return len(plain)


_validator = None


def standing_for(values):
    """The elements of a list that stand for all of them under the result schema's item
    rules, which are a type and a minimum: per Python type, its least and its greatest element
    (where the type has no order, its first). The per-sample lists hold most of a file's
    elements, and checking each through jsonschema took most of a table's time."""
    ends = {}
    for value in values:
        kind = type(value)
        if kind not in ends:
            ends[kind] = [value, value]
        elif kind in (int, float):
            ends[kind] = [min(ends[kind][0], value), max(ends[kind][1], value)]
    return [value for pair in ends.values() for value in dict.fromkeys(pair)]


def _checked_form(result):
    """`result` with each case's per-sample lists cut to the elements that stand for them."""
    cases = result.get("cases")
    if not isinstance(cases, dict):
        return result
    light = {}
    for case, measured in cases.items():
        samples = measured.get("samples") if isinstance(measured, dict) else None
        light[case] = measured if not isinstance(samples, dict) else {**measured, "samples": {
            key: standing_for(values) if isinstance(values, list) else values
            for key, values in samples.items()}}
    return {**result, "cases": light}


def _validate(result, path):
    global _validator
    if _validator is None:
        import jsonschema
        import yaml

        with open(SCHEMA) as handle:
            _validator = jsonschema.Draft202012Validator(yaml.safe_load(handle))
    errors = sorted(_validator.iter_errors(_checked_form(result)),
                    key=lambda e: list(e.absolute_path))
    if errors:
        steps = list(errors[0].absolute_path)
        if len(steps) == 5 and steps[0] == "cases" and steps[2] == "samples":
            steps[4] = "(a sample)"  # its place in the cut list is not its place in the file
        where = "/".join(map(str, steps)) or "(top level)"
        raise DamagedResult(path, f"does not match {SCHEMA.name} at {where}: "
                                  f"{errors[0].message}")


def load(path):
    """A result file's JSON object, whatever its format; a file that is not one (not text, not
    JSON, cut short) raises DamagedResult naming it."""
    with open(path, "rb") as handle:
        text = handle.read()
    if text.startswith(GZIP_MAGIC):
        try:
            text = gzip.decompress(text)
        except EOFError:
            raise DamagedResult(path, f"cut short: its {len(text)} bytes end inside the "
                                      "compressed stream") from None
        except (gzip.BadGzipFile, zlib.error) as error:
            raise DamagedResult(path, f"not a whole gzip file ({error})") from None
    try:
        result = json.loads(text)
    except UnicodeDecodeError as error:
        raise DamagedResult(path, f"not text ({error.reason} at byte {error.start})")
    except json.JSONDecodeError as error:
        # A file cut short is a prefix of a result: the parser stops on its last line (a
        # result is written one value per line), where the text runs out
        rest = text[error.pos:].rstrip()
        if error.msg != "Extra data" and error.pos > 0 and b"\n" not in rest:
            raise DamagedResult(path, f"cut short: its {len(text)} bytes end inside a value")
        raise DamagedResult(path, f"not JSON ({error.msg} at line {error.lineno} column "
                                  f"{error.colno})")
    if not isinstance(result, dict):
        raise DamagedResult(path, f"a JSON {type(result).__name__}, not a result object")
    return result


def read(path, validate=True):
    """A result file's content, refused unless it is of this format."""
    result = load(path)
    found = result.get("format", 1)
    if found != FORMAT:
        raise ResultError(
            f"{path} is a format-{found} result; this workflow reads format {FORMAT}. "
            f"Convert its result set with `python scripts/convert_results.py "
            f"{_result_set(path)}`, or measure it again.")
    if validate:
        _validate(result, path)
    return result


def _result_set(path):
    parts = Path(path).parts
    return str(Path(*parts[:parts.index("runs")])) if "runs" in parts else "<result set>"
