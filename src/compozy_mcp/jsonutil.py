"""JSON encoding: fast wire JSON (orjson) and the canonical form that digests are taken over."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import orjson

JSONObject = dict[str, Any]

# Go's encoder (which upstream digests are computed with) escapes these two even with
# SetEscapeHTML(false); orjson writes them raw. They can only occur inside strings.
_GO_ESCAPES = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, keys in insertion order."""
    return orjson.dumps(value)


def dumps_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def dumps_pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def loads(data: bytes | str) -> Any:
    """Parse JSON; raises ``orjson.JSONDecodeError`` (a ``ValueError``) on bad input."""
    return orjson.loads(data)


#: the most digits Python turns into an int (``sys.get_int_max_str_digits``'s default)
MAX_INT_DIGITS = 4300


class HugeNumber(float):
    """A JSON number no tool can take: an integer of more than :data:`MAX_INT_DIGITS` digits
    or a number beyond a double's range (``1e400``), held as ±inf. It is valid JSON, so it is
    parsed; the input check refuses it naming its field (orjson will not encode it, so it can
    never be passed on silently as ``null``)."""

    __slots__ = ()


def _float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else HugeNumber(value)


def _int(text: str) -> int | float:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_INT_DIGITS else HugeNumber(float(text))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_request(data: bytes | str) -> Any:
    """Parse what a caller sent: valid JSON always parses, so that a value the tools cannot
    take (an integer past 64 bits or of 5,001 digits, ``1e400``, a lone surrogate in a
    string) is refused by the input check naming its field, not as "not JSON". orjson first
    (fast); what it cannot represent goes through the standard library (numbers beyond range
    become :class:`HugeNumber`), which still refuses NaN and Infinity, which are not JSON.
    Raises ``ValueError`` on text that is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return json.loads(text, parse_float=_float, parse_int=_int, parse_constant=_no_constant)


def _go_float(value: float) -> str:
    """Format a float as Go's ``strconv.FormatFloat(f, 'g', -1, 64)``, ``e+`` turned into ``e``."""
    if value == 0:
        return "0"
    digits, exp = _shortest_digits(value)
    point = exp + len(digits)  # position of the decimal point relative to the digits
    sci_exp = point - 1
    sign = "-" if value < 0 else ""
    # Go picks %e for the shortest form when the exponent is < -4 or >= 6.
    if sci_exp < -4 or sci_exp >= 6:
        return sign + _go_exponent(digits, sci_exp)
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_exponent(digits: str, sci_exp: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp_sign = "-" if sci_exp < 0 else ""
    return f"{mantissa}e{exp_sign}{abs(sci_exp):02d}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-tripping decimal digits of ``|value|`` and their power-of-ten exponent."""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0") if frac != "0" else ""
    digits = (whole + frac).lstrip("0") or "0"
    exp -= len(frac)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    return stripped or "0", exp


def _normalize_numbers(value: Any) -> Any:
    """Replace floats by markers so that canonical JSON prints them the way upstream does."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("canonical JSON has no representation for NaN or infinity")
        return _RawNumber(_go_float(value))
    if isinstance(value, dict):
        return {key: _normalize_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalize_numbers(item) for item in value]
    return value


class _RawNumber(str):
    """A pre-formatted number, emitted without quotes by :func:`canonical_json`."""

    __slots__ = ()


def _contains_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_contains_float(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_contains_float(item) for item in value)
    return False


def canonical_json(value: Any) -> bytes:
    """Canonical JSON: keys sorted, no whitespace, UTF-8 unescaped (upstream's ``CanonicalJSON``).

    Integers are printed verbatim; other numbers as Go's shortest ``%g`` form with ``e+``
    turned into ``e``, and ``-0`` as ``0``.
    """
    if not _contains_float(value):
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    else:
        out = _encode_with_raw_numbers(_normalize_numbers(value))
    for raw, escaped in _GO_ESCAPES:
        if raw in out:
            out = out.replace(raw, escaped)
    return out


def _encode_with_raw_numbers(value: Any) -> bytes:
    if isinstance(value, _RawNumber):
        return str(value).encode()
    if isinstance(value, dict):
        parts = [
            orjson.dumps(key) + b":" + _encode_with_raw_numbers(value[key]) for key in sorted(value)
        ]
        return b"{" + b",".join(parts) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(_encode_with_raw_numbers(item) for item in value) + b"]"
    return orjson.dumps(value)


#: the largest integer every JSON library reads exactly (2**53); integral floats up to it
#: become ints
_EXACT_INTEGERS = float(2**53)


def integral(value: Any) -> Any:
    """``value`` with every float that holds an integer written as an int (``600.0`` -> ``600``).

    JSON libraries print ``600.0`` differently (Python ``600.0``, Go and JavaScript ``600``);
    they all print ``600`` alike, so a digest recomputed from a served schema with any of them
    matches ours. Returns ``value`` itself when nothing changes (no copy).
    """
    if isinstance(value, float):
        if value.is_integer() and abs(value) <= _EXACT_INTEGERS:
            return int(value)
        return value
    if isinstance(value, dict):
        changed = {key: integral(item) for key, item in value.items()}
        return value if all(changed[key] is value[key] for key in value) else changed
    if isinstance(value, list):
        items = [integral(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def schema_digest(schema: JSONObject) -> str:
    """Lowercase hex sha256 of the canonical JSON of a schema object."""
    if not isinstance(schema, dict):
        raise TypeError("a schema digest is taken over a JSON object")
    return sha256_hex(canonical_json(schema))
