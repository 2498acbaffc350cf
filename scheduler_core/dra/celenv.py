"""The CEL environment of DRA's device selectors on cel-python (see cel.py, which imports this module on first
use): kube's functions and equality, cel-go's checked arithmetic and strings extension, the ``device`` variable,
``cel.bind``, compiled programs and cel-go's compile errors."""
from __future__ import annotations

import operator
import re
from fractions import Fraction

import celpy
from celpy import celtypes as ct
from celpy.evaluation import CELEvalError, Evaluator, bool_ge, bool_gt, bool_le, bool_lt

from ..objects.quantity import QuantityError, parse_quantity
from . import celcheck
from .celvalues import SEMVER, CELError, Quantity, Semver, semver_parse_error


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _same_type(name, a, b):
    if type(a) is not type(b) or not isinstance(a, (Semver, Quantity)):
        raise CELError(f"no such overload: {name}")
    return (a.value, b.value) if isinstance(a, Quantity) else (a, b)


def _semver(s):
    if not isinstance(s, str):
        raise TypeError("no such overload")
    err = semver_parse_error(str(s))
    return _eval_error(err) if err else Semver(str(s))


def _is_semver(s):
    return ct.BoolType(SEMVER.match(str(s)) is not None)


def _quantity(s):
    try:
        return Quantity(parse_quantity(str(s)))
    except QuantityError as err:
        raise CELError(str(err)) from None


def _is_quantity(s):
    try:
        parse_quantity(str(s))
        return ct.BoolType(True)
    except QuantityError:
        return ct.BoolType(False)


def _compare_to(a, b):
    x, y = _same_type("compareTo", a, b)
    return ct.IntType(_cmp(x, y))


def _is_greater_than(a, b):
    x, y = _same_type("isGreaterThan", a, b)
    return ct.BoolType(x > y)


def _is_less_than(a, b):
    x, y = _same_type("isLessThan", a, b)
    return ct.BoolType(x < y)


def _arith(sign):
    def op(a, b):
        if not isinstance(a, Quantity):
            raise CELError("no such overload: add" if sign > 0 else "no such overload: sub")
        other = b.value if isinstance(b, Quantity) else Fraction(int(b))
        return Quantity(a.value + sign * other)
    return op


def _as_integer(q):
    if not isinstance(q, Quantity) or q.value.denominator != 1 or abs(q.value) > 2**63 - 1:
        raise CELError("cannot convert value to integer")
    return ct.IntType(int(q.value))


_NUMBERS = (ct.IntType, ct.UintType, ct.DoubleType)


def _equals(a, b) -> bool:
    """cel-go's heterogeneous equality: values of different types are unequal (numbers compare by value)."""
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS):
        return Fraction(a) == Fraction(b)
    if isinstance(a, (Semver, Quantity)) or isinstance(b, (Semver, Quantity)):
        return a == b
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        return bool(a == b)
    except TypeError:
        return False


def _equality(a, b, equal: bool):
    """``==`` and ``!=`` as cel-go calls ``a.Equal(b)``: a semver or a quantity against another type is "no such
    overload" (the apiserver library's Equal), other values of different types are unequal."""
    err = _error_of(a, b)
    if err is not None:
        return err
    if isinstance(a, (Semver, Quantity)) and type(b) is not type(a):
        return _eval_error("no such overload")
    return ct.BoolType(_equals(a, b) == equal)


def _no_trait(a) -> bool:
    """A value whose cel-go type lacks the operator traits (comparison and arithmetic) of the primitive types."""
    return a is None or isinstance(a, (Semver, Quantity, ct.MapType, dict))


def _relation(name: str, base):
    """``<``, ``<=``, ``>``, ``>=``: a left operand without cel-go's Comparer trait (semver, quantity, list, map,
    null) is "no such overload: _<_" (the interpreter's text); other pairs go to cel-python's comparison."""
    def compare(a, b):
        err = _error_of(a, b)
        if err is not None:
            return err
        if _no_trait(a) or isinstance(a, (ct.ListType, list)):
            return _eval_error(f"no such overload: {name}")
        return base(a, b)
    return compare


def _error_of(a, b):
    """An operand that is an evaluation error, which the comparison propagates."""
    return a if isinstance(a, CELEvalError) else b if isinstance(b, CELEvalError) else None


# -- cel-go's checked integer arithmetic and conversions (common/types/overflow.go, int.go, string.go) --------
INT64 = (-2**63, 2**63 - 1)
UINT64 = (0, 2**64 - 1)
_INT_TYPES = {ct.IntType: (INT64, "integer overflow"), ct.UintType: (UINT64, "unsigned integer overflow")}


def _eval_error(text: str, cause=ValueError) -> CELEvalError:
    """A CEL error value (not raised: ``&&``, ``||`` and ``?:`` may still absorb it)."""
    return CELEvalError(text, cause, ())


def _cel_value(value):
    """cel-python's arithmetic on doubles, strings, bytes and lists gives Python's types: back to CEL's, so that
    equality (``_equals``) sees the type of the value."""
    for python, cel in ((float, ct.DoubleType), (str, ct.StringType), (bytes, ct.BytesType), (list, ct.ListType)):
        if type(value) is python:
            return cel(value)
    return value


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_op(name: str, base):
    """The binary operator ``name`` with cel-go's errors on ints and uints of one type (division and modulus by
    zero, overflow); every other operand pair goes to cel-python's operator."""
    def op(a, b):
        err = _error_of(a, b)
        if err is not None:
            return err
        kind = type(a)
        if _no_trait(a) or kind is ct.BoolType:
            return _eval_error(f"no such overload: {name}")
        if kind not in _INT_TYPES or type(b) is not kind:
            return _cel_value(base(a, b))
        (lo, hi), overflow = _INT_TYPES[kind]
        x, y = int(a), int(b)
        if name in ("_/_", "_%_") and y == 0:
            return _eval_error("division by zero" if name == "_/_" else "modulus by zero", ZeroDivisionError)
        if name == "_%_":
            if kind is ct.IntType and x == lo and y == -1:
                return _eval_error(overflow)
            return kind(x - y * _go_div(x, y))
        result = {"_+_": x + y, "_-_": x - y, "_*_": x * y}.get(name)
        result = _go_div(x, y) if result is None else result
        return kind(result) if lo <= result <= hi else _eval_error(overflow)
    return op


def _negate(a):
    if isinstance(a, CELEvalError):
        return a
    if not isinstance(a, (ct.IntType, ct.DoubleType, float, ct.DurationType)):
        return _eval_error("no such overload: -_")
    if type(a) is ct.IntType and int(a) == INT64[0]:
        return _eval_error("integer overflow")
    return _cel_value(operator.neg(a))


_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")
_UINT_TEXT = re.compile(r"^\+?[0-9]+$")
_FLOAT_TEXT = re.compile(r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$", re.I)


def _conversion(kind, name: str, text_pattern, lo=None, hi=None, overflow=""):
    """int(), uint() or double() as cel-go converts: strings as Go's strconv parses them ("type conversion error
    from 'string' to 'T'"), doubles and ints checked against the target's range."""
    def convert(v):
        if isinstance(v, CELEvalError):
            return v
        if isinstance(v, str):
            if not text_pattern.match(str(v)):
                return _eval_error(f"type conversion error from 'string' to '{name}'")
            value = float(str(v)) if kind is ct.DoubleType else int(str(v))
            if kind is not ct.DoubleType and not lo <= value <= hi:
                return _eval_error(f"type conversion error from 'string' to '{name}'")
            return kind(value)
        if kind is ct.DoubleType or type(v) not in (ct.IntType, ct.UintType, ct.DoubleType):
            return kind(v)
        if type(v) is ct.DoubleType:
            f = float(v)
            bad = (f != f or f in (float("inf"), float("-inf")) or
                   (f <= float(lo) or f >= float(hi) if kind is ct.IntType else f < 0 or f >= 2.0**64))
            return _eval_error(overflow) if bad else kind(int(f))
        return kind(int(v)) if lo <= int(v) <= hi else _eval_error(overflow)
    return convert


# -- cel-go's strings extension at version 2 (ext/strings.go), in kube's base environment since 1.29 ---------
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def _strings(*args) -> tuple:
    """The string arguments of a strings function (anything else: no such overload)."""
    if not all(isinstance(a, str) for a in args):
        raise TypeError("no such overload")
    return tuple(str(a) for a in args)


def _index(v) -> int:
    if type(v) is not ct.IntType:
        raise TypeError("no such overload")
    return int(v)


def _char_at(s, i):
    (s,), i = _strings(s), _index(i)
    if i < 0 or i > len(s):
        return _eval_error(f"index out of range: {i}")
    return ct.StringType(s[i] if i < len(s) else "")


def _index_of(s, sub, offset=None):
    s, sub = _strings(s, sub)
    off = 0 if offset is None else _index(offset)
    if sub == "":
        return ct.IntType(off)
    if off < 0:
        return _eval_error(f"index out of range: {off}")
    return ct.IntType(s.find(sub, off) if off < len(s) else -1)


def _last_index_of(s, sub, offset=None):
    s, sub = _strings(s, sub)
    if offset is None:
        if sub == "":
            return ct.IntType(len(s))
        if len(s.encode()) < len(sub.encode()):
            return ct.IntType(-1)
        off = len(s) - 1
    else:
        off = _index(offset)
        if sub == "":
            return ct.IntType(off)
    if off < 0:
        return _eval_error(f"index out of range: {off}")
    if off >= len(s):
        return ct.IntType(-1)
    return ct.IntType(s.rfind(sub, 0, min(off, len(s) - len(sub)) + len(sub)))


def _ascii_case(convert):
    def change(s):
        (s,) = _strings(s)
        return ct.StringType("".join(convert(c) if c <= "\x7f" else c for c in s))
    return change


def _replace(s, old, new, n=None):
    s, old, new = _strings(s, old, new)
    return ct.StringType(s.replace(old, new, -1 if n is None else _index(n)))


def _split(s, sep, n=None):
    s, sep = _strings(s, sep)
    n = -1 if n is None else _index(n)
    if n == 0:
        return ct.ListType()
    if sep == "":                                   # Go splits after each character, the last part keeps the rest
        parts = list(s) if n < 0 or n >= len(s) else list(s[:n - 1]) + [s[n - 1:]]
    else:
        parts = s.split(sep, n - 1 if n > 0 else -1)
    return ct.ListType([ct.StringType(p) for p in parts])


def _substring(s, start, end=None):
    (s,), start = _strings(s), _index(start)
    if end is None:
        if start < 0 or start > len(s):
            return _eval_error(f"index out of range: {start}")
        return ct.StringType(s[start:])
    end = _index(end)
    if start > end:
        return _eval_error(f"invalid substring range. start: {start}, end: {end}")
    for i in (start, end):
        if i < 0 or i > len(s):
            return _eval_error(f"index out of range: {i}")
    return ct.StringType(s[start:end])


def _join(items, separator=""):
    (separator,) = _strings(separator)
    if not isinstance(items, list):
        raise TypeError("no such overload")
    for item in items:
        if not isinstance(item, str):
            return _eval_error(f"join: invalid input: {item}")
    return ct.StringType(separator.join(str(i) for i in items))


STRING_FUNCTIONS = {
    "charAt": _char_at, "indexOf": _index_of, "lastIndexOf": _last_index_of,
    "lowerAscii": _ascii_case(str.lower), "upperAscii": _ascii_case(str.upper),
    "replace": _replace, "split": _split, "substring": _substring,
    "trim": lambda s: ct.StringType(_strings(s)[0].strip(_GO_SPACE)), "join": _join,
}


FUNCTIONS = {
    "_==_": lambda a, b: _equality(a, b, True), "_!=_": lambda a, b: _equality(a, b, False),
    **{name: _relation(name, base) for name, base in (("_<_", bool_lt), ("_<=_", bool_le), ("_>_", bool_gt),
                                                      ("_>=_", bool_ge))},
    **{name: _int_op(name, base) for name, base in (("_+_", operator.add), ("_-_", operator.sub),
                                                    ("_*_", operator.mul), ("_/_", operator.truediv),
                                                    ("_%_", operator.mod))},
    "-_": _negate,
    "int": _conversion(ct.IntType, "int", _INT_TEXT, *INT64, "integer overflow"),
    "uint": _conversion(ct.UintType, "uint", _UINT_TEXT, *UINT64, "unsigned integer overflow"),
    "double": _conversion(ct.DoubleType, "double", _FLOAT_TEXT),
    "semver": _semver, "isSemver": _is_semver,
    "major": lambda v: ct.IntType(v.major), "minor": lambda v: ct.IntType(v.minor),
    "patch": lambda v: ct.IntType(v.patch),
    "quantity": _quantity, "isQuantity": _is_quantity,
    "sign": lambda q: ct.IntType(_cmp(q.value, 0)),
    "isInteger": lambda q: ct.BoolType(q.value.denominator == 1),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: ct.DoubleType(float(q.value)),
    "add": _arith(1), "sub": _arith(-1),
    "compareTo": _compare_to, "isGreaterThan": _is_greater_than, "isLessThan": _is_less_than,
    **STRING_FUNCTIONS,
}


# -- the device variable ------------------------------------------------------------------------------------
class _DomainMap(ct.MapType):
    """device.attributes / device.capacity: a domain the device lacks is an empty map."""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            return ct.MapType()


def qualified(name: str, driver: str):
    """parseQualifiedName: (domain, id), the driver's domain for a bare id."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def attribute_value(attr: dict):
    """A DeviceAttribute as a CEL value (semver for versions)."""
    if "int" in attr:
        return ct.IntType(int(attr["int"]))
    if "bool" in attr:
        return ct.BoolType(bool(attr["bool"]))
    if "string" in attr:
        return ct.StringType(attr["string"])
    if "version" in attr:
        return Semver(attr["version"])
    raise CELError("unsupported attribute value")


def device_activation(driver: str, device: dict) -> dict:
    """The ``device`` variable for one ResourceSlice device (its raw dict)."""
    attributes, capacity = {}, {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = qualified(name, driver)
        try:
            value = attribute_value(attr)
        except CELError as err:
            raise CELError(f"attribute {name}: {err}") from None
        attributes.setdefault(ct.StringType(domain), {})[ct.StringType(ident)] = value
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = qualified(name, driver)
        capacity.setdefault(ct.StringType(domain), {})[ct.StringType(ident)] = Quantity(parse_quantity(cap["value"]))
    return {"device": ct.MapType({
        ct.StringType("driver"): ct.StringType(driver),
        ct.StringType("allowMultipleAllocations"): ct.BoolType(bool(device.get("allowMultipleAllocations"))),
        ct.StringType("attributes"): _DomainMap({k: ct.MapType(v) for k, v in attributes.items()}),
        ct.StringType("capacity"): _DomainMap({k: ct.MapType(v) for k, v in capacity.items()}),
    })}


def _runtime_text(err: CELEvalError) -> str:
    """kube's (cel-go's) text for a cel-python evaluation error."""
    args = err.args
    msg = str(args[0]) if args else str(err)
    cause = args[1] if len(args) > 1 else None
    if cause is KeyError:
        m = re.match(r"no such member in mapping: '(.*)'$", msg)
        if m:
            return f"no such key: {m.group(1)}"
        detail = args[2] if len(args) > 2 and args[2] else ()
        if msg == "no such key" and detail:
            return f"no such key: {detail[0]}"
    if cause is TypeError and "no matching overload" in msg:
        return "no such overload"
    return msg


class Program:
    """A compiled selector: ``matches(activation)`` is True/False or raises CELError (runtime error)."""

    __slots__ = ("expression", "program", "error")

    def __init__(self, expression: str, program=None, error: str | None = None):
        self.expression = expression
        self.program = program
        self.error = error

    def matches(self, activation) -> bool:
        try:
            result = self.program.evaluate(activation)
        except CELEvalError as err:
            raise CELError(_runtime_text(err)) from None
        except CELError:
            raise
        except (TypeError, ValueError, ArithmeticError) as err:
            raise CELError(str(err)) from None
        if isinstance(result, CELEvalError):
            raise CELError(_runtime_text(result))
        if not isinstance(result, (bool, ct.BoolType)):
            raise CELError(f"CEL result of type {type(result).__name__} could not be converted to bool")
        return bool(result)


class _Evaluator(Evaluator):
    """cel-python's evaluator with the ``cel.bind(name, init, expr)`` macro of cel-go's bindings extension (in
    kube's DRA environment since 1.31)."""

    def sub_evaluator(self, ast):
        return _Evaluator(ast, activation=self.activation)

    def member_dot_arg(self, tree):
        target, method = tree.children[:2]
        if method.value == "bind" and len(tree.children) == 3 and _identifier(target) == "cel":
            args = tree.children[2].children
            name = _identifier(args[0]) if len(args) == 3 else None
            if name is not None:
                init = self.visit(args[1])
                if isinstance(init, CELEvalError):
                    return init
                return self.sub_evaluator(args[2]).evaluate({name: init})
        return super().member_dot_arg(tree)


def _identifier(tree):
    """The name of an expression that is a bare identifier, else None."""
    idents = list(tree.find_data("ident")) if hasattr(tree, "find_data") else []
    if len(idents) != 1 or any(t.data not in ("ident", "primary", "member", "unary", "multiplication", "addition",
                                               "relation", "conditionaland", "conditionalor", "expr")
                               for t in tree.iter_subtrees()):
        return None
    return idents[0].children[0].value


class _Runner(celpy.InterpretedRunner):
    def evaluate(self, context):
        return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


_ENV = celpy.Environment(runner_class=_Runner)


# What cel-go's ANTLR parser expects where an operand is missing (after an operator, at the end).
_OPERAND_EXPECTED = ("{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
                     "BYTES, IDENTIFIER}")


def _cel_error(expression: str, offset: int, message: str) -> str:
    """One of cel-go's errors as common.Errors prints it: position, message, the source line and a caret (an empty
    expression has no line to show, and its end is column 0)."""
    if not expression:
        return f"ERROR: <input>:1:0: {message}"
    line_no = expression.count("\n", 0, offset) + 1
    start = expression.rfind("\n", 0, offset) + 1
    end = expression.find("\n", offset)
    col = offset - start + 1
    return (f"ERROR: <input>:{line_no}:{col}: {message}\n | {expression[start:end if end >= 0 else None]}"
            f"\n | {'.' * (col - 1)}^")


_PAIRS = ("==", "!=", "<=", ">=", "&&", "||")
_SINGLE = "<>!?:+-*/%.,[]{}()"
_STRING_START = re.compile(r"""(?:[rR][bB]?|[bB][rR]?)?('''|\"\"\"|'|")""")


def _lexer_errors(expression: str) -> tuple:
    """The token recognition errors of cel-go's ANTLR lexer, as (offset, the text it could not match), and the
    expression with those texts blanked out (what its parser then reads)."""
    errors, out, i, n = [], list(expression), 0, len(expression)

    def fail(start: int, end: int) -> int:
        errors.append((start, expression[start:end]))
        out[start:end] = " " * (end - start)
        return end

    while i < n:
        ch = expression[i]
        string = _STRING_START.match(expression, i)
        if ch.isspace():
            i += 1
        elif expression.startswith("//", i):
            newline = expression.find("\n", i)
            i = n if newline < 0 else newline
        elif string:
            quote, raw = string.group(1), "r" in string.group(0)[:-len(string.group(1))].lower()
            j = string.end()
            while j < n and not expression.startswith(quote, j) and (len(quote) == 3 or expression[j] != "\n"):
                j += 2 if expression[j] == "\\" and not raw else 1
            if j < n and expression.startswith(quote, j):
                i = j + len(quote)
            else:   # unterminated: the lexer gives up at the end of the line or of the input
                i = fail(i, min(j + 1, n))
        elif expression[i:i + 2] in _PAIRS:
            i += 2
        elif ch in "=&|":   # half a pair: the lexer read the next character too before it gave up
            i = fail(i, min(i + 2, n))
        elif ch in _SINGLE or ch.isalnum() or ch == "_":
            i += 1
        else:
            i = fail(i, i + 1)
    return errors, "".join(out)


def _parse_error(expression: str, cleaned: str, err: celpy.CELParseError):
    """ANTLR's words where cel-go's parser stops reading ``cleaned`` (the expression after the lexer's errors):
    (offset, message), or None for a failure these rules do not cover."""
    cause = err.__cause__ or err.__context__
    token = getattr(cause, "token", None)
    expected = set(getattr(cause, "expected", None) or ())
    if token is None:
        return None
    if token.type == "$END":
        if "IDENT" in expected:
            return len(expression), f"Syntax error: mismatched input '<EOF>' expecting {_OPERAND_EXPECTED}"
        if expected == {"RPAR"}:
            return len(expression), "Syntax error: missing ')' at '<EOF>'"
        return None
    rest = cleaned.rstrip()
    if not rest.endswith(token.value):
        return None
    start = len(rest) - len(token.value)
    try:   # the last token, after a whole expression: ANTLR deletes it
        _ENV.compile(cleaned[:start])
    except celpy.CELParseError:
        return None
    return start, f"Syntax error: extraneous input '{token.value}' expecting <EOF>"


def _syntax_errors(expression: str) -> tuple:
    """(cel-go's syntax errors in source order as (offset, message), the parsed tree): no errors when it parses;
    errors None (and cel-python's error) for a failure whose cel-go words are not known here."""
    lexed, cleaned = _lexer_errors(expression)
    errors = [(offset, f"Syntax error: token recognition error at: '{text}'") for offset, text in lexed]
    try:
        return errors, _ENV.compile(cleaned)
    except celpy.CELParseError as err:
        found = _parse_error(expression, cleaned, err)
        if found is None:
            return None, err
        return sorted(errors + [found], key=lambda e: e[0]), None


def compile_selector(expression: str) -> Program:
    """The program for an expression, or one whose ``error`` says why it does not compile, as kube's compiler says
    it: ``compilation failed: `` and cel-go's syntax and type errors (``celcheck``), or a result that is not
    bool."""
    errors, ast = _syntax_errors(expression)
    if errors is None:   # a syntax error whose cel-go words are not known: cel-python's description
        return Program(expression, error=f"compilation failed: {str(ast).splitlines()[0]}")
    if not errors:
        errors, result = celcheck.check(expression, ast)
    if errors:
        return Program(expression, error="compilation failed: " + "\n".join(
            _cel_error(expression, offset, message) for offset, message in errors))
    if result not in ("bool", celcheck.ANY, celcheck.DYN):
        return Program(expression, error=f"must evaluate to bool or the unknown type, not "
                                         f"{celcheck.type_name(result)}")
    return Program(expression, _ENV.program(ast, functions=FUNCTIONS))
