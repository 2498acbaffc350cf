"""cel-go's type checker for DRA's device selectors, over cel-python's parse tree (celenv compiles with it): the
errors kube-apiserver refuses a selector with, in cel-go's words and positions.

The environment is kube's (k8s.io/dynamic-resource-allocation/cel): ``device`` is a ``kubernetes.DRADevice`` with
``driver`` (string), ``allowMultipleAllocations`` (bool), ``attributes`` (map(string, map(string, any))) and
``capacity`` (map(string, map(string, kubernetes.Quantity))); macros and ``cel.bind`` bind their variables. What
is checked: undeclared references (variables, and functions the environment does not declare), undefined fields of
a device, the standard operators' overloads (equality of one type, ordering, arithmetic, logic, the conditional,
``in``, indexing, field selection), the overloads of ``size``, the string tests, quantities and semvers, literal
``matches`` patterns (ValidateRegexLiterals), and the result: a bool or ``any``. Values of type ``any`` or ``dyn``
pass every check, as in cel-go; the other declared functions' arguments are not checked (their result is
``dyn``), nor the homogeneity of list and map literals. Positions are cel-go's: an operator's, a call's ``(``, a
selection's ``.``, an index's ``[``.
"""
from __future__ import annotations

import ast
import re

DYN, ANY, ERROR = "dyn", "any", "!error"
DEVICE, QUANTITY, SEMVER = "kubernetes.DRADevice", "kubernetes.Quantity", "kubernetes.Semver"
DEVICE_FIELDS = {"driver": "string", "allowMultipleAllocations": "bool",
                 "attributes": ("map", "string", ("map", "string", ANY)),
                 "capacity": ("map", "string", ("map", "string", QUANTITY))}
NUMBERS = ("int", "uint", "double")
MACROS = ("all", "exists", "exists_one", "map", "filter", "existsOne", "sortBy", "optMap", "optFlatMap")
TWO_VARIABLE_MACROS = ("all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry")
# The functions kube's CEL environment (k8s.io/apiserver/pkg/cel/environment, at 1.36) declares: cel-go's standard
# library and optional types, its strings (v2), sets, lists (v3), two-variable comprehensions and bindings
# extensions, and kube's libraries (urls, regex, lists, authz, quantity, ip, cidr, format, semver). A call of
# another is cel-go's "undeclared reference".
FUNCTIONS = frozenset((
    "size", "matches", "contains", "startsWith", "endsWith", "int", "uint", "double", "string", "bytes", "bool",
    "dyn", "type", "duration", "timestamp", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds", "has",
    "optional.of", "optional.ofNonZeroValue", "optional.none", "optional.unwrap", "unwrapOpt", "value", "hasValue",
    "or", "orValue",
    "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split", "substring", "trim", "join",
    "format", "strings.quote", "reverse", "sets.contains", "sets.equivalent", "sets.intersects", "slice", "flatten",
    "lists.range", "distinct", "sort", "first", "last",
    "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery", "find",
    "findAll", "isSorted", "sum", "min", "max", "path", "group", "serviceAccount", "resource", "subresource",
    "namespace", "name", "check", "allowed", "reason", "errored", "error", "fieldSelector", "labelSelector",
    "quantity", "isQuantity", "sign", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "asInteger",
    "asApproximateFloat", "isInteger", "ip", "isIP", "ip.isCanonical", "family", "isUnspecified", "isLoopback",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR", "containsIP",
    "containsCIDR", "masked", "prefixLength", "validate", "semver", "isSemver", "major", "minor", "patch",
))
NAMESPACES = ("format", "sets", "lists", "strings", "optional", "ip")   # of qualified function names
LIST, MAP = ("list", DYN), ("map", DYN, DYN)   # any list, any map, in the overload tables below

# function -> [(argument types, result)]; a member function's first argument is its target
GLOBALS = {
    "size": [(("string",), "int"), (("bytes",), "int"), ((LIST,), "int"), ((MAP,), "int")],
    "quantity": [(("string",), QUANTITY)], "isQuantity": [(("string",), "bool")],
    "semver": [(("string",), SEMVER)], "isSemver": [(("string",), "bool")],
}
METHODS = {
    "size": [(("string",), "int"), (("bytes",), "int"), ((LIST,), "int"), ((MAP,), "int")],
    **{name: [(("string", "string"), "bool")] for name in ("contains", "startsWith", "endsWith", "matches")},
    "compareTo": [((QUANTITY, QUANTITY), "int"), ((SEMVER, SEMVER), "int")],
    "isGreaterThan": [((QUANTITY, QUANTITY), "bool"), ((SEMVER, SEMVER), "bool")],
    "isLessThan": [((QUANTITY, QUANTITY), "bool"), ((SEMVER, SEMVER), "bool")],
    "add": [((QUANTITY, QUANTITY), QUANTITY), ((QUANTITY, "int"), QUANTITY)],
    "sub": [((QUANTITY, QUANTITY), QUANTITY), ((QUANTITY, "int"), QUANTITY)],
    "asInteger": [((QUANTITY,), "int")], "asApproximateFloat": [((QUANTITY,), "double")],
    "sign": [((QUANTITY,), "int")], "isInteger": [((QUANTITY,), "bool")],
    "major": [((SEMVER,), "int")], "minor": [((SEMVER,), "int")], "patch": [((SEMVER,), "int")],
}
_ORDERED = [((t, t), "bool") for t in ("bool", "string", "bytes")] + \
    [((a, b), "bool") for a in NUMBERS for b in NUMBERS]
_ARITH = [((t, t), t) for t in NUMBERS]
OPERATORS = {
    "_<_": _ORDERED, "_<=_": _ORDERED, "_>_": _ORDERED, "_>=_": _ORDERED,
    "_+_": _ARITH + [(("string", "string"), "string"), (("bytes", "bytes"), "bytes"), ((LIST, LIST), LIST)],
    "_-_": _ARITH, "_*_": _ARITH, "_/_": _ARITH, "_%_": [(("int", "int"), "int"), (("uint", "uint"), "uint")],
    "_&&_": [(("bool", "bool"), "bool")], "_||_": [(("bool", "bool"), "bool")],
    "!_": [(("bool",), "bool")], "-_": [(("int",), "int"), (("double",), "double")],
}
BINARY = {"relation_lt": ("_<_", "<"), "relation_le": ("_<=_", "<="), "relation_gt": ("_>_", ">"),
          "relation_ge": ("_>=_", ">="), "relation_eq": ("_==_", "=="), "relation_ne": ("_!=_", "!="),
          "relation_in": ("@in", "in"), "addition_add": ("_+_", "+"), "addition_sub": ("_-_", "-"),
          "multiplication_mul": ("_*_", "*"), "multiplication_div": ("_/_", "/"),
          "multiplication_mod": ("_%_", "%")}


def type_name(t) -> str:
    """cel-go's FormatCELType."""
    if isinstance(t, tuple):
        return f"list({type_name(t[1])})" if t[0] == "list" else f"map({type_name(t[1])}, {type_name(t[2])})"
    return t


def _loose(t) -> bool:
    return t in (DYN, ANY)


def _fits(want, got) -> bool:
    if _loose(want) or _loose(got):
        return True
    if isinstance(want, tuple) or isinstance(got, tuple):
        return (isinstance(want, tuple) and isinstance(got, tuple) and want[0] == got[0]
                and all(_fits(w, g) for w, g in zip(want[1:], got[1:])))
    return want == got


def _literal_type(text: str) -> str:
    if text in ("true", "false"):
        return "bool"
    if text == "null":
        return "null_type"
    if text[:1] in "\"'" or text[:2].lower() in ('r"', "r'"):
        return "string"
    if text[:2].lower() in ('b"', "b'"):
        return "bytes"
    if text[-1] in "uU":
        return "uint"
    if not text.lower().startswith(("0x", "-0x")) and any(c in text for c in ".eE"):
        return "double"
    return "int"


class Checker:
    def __init__(self, expression: str):
        self.source = expression
        self.errors = []    # (offset, message)
        self.patterns = []  # (offset, literal) of the first argument of each ``matches`` call

    # -- positions ------------------------------------------------------------------------------
    def tokens(self, node):
        if hasattr(node, "data"):
            for child in node.children:
                yield from self.tokens(child)
        elif getattr(node, "start_pos", None) is not None:
            yield node

    def end(self, node) -> int:
        return max((t.end_pos for t in self.tokens(node)), default=0)

    def start(self, node) -> int:
        return min((t.start_pos for t in self.tokens(node)), default=0)

    def after(self, text: str, node) -> int:
        """The offset of ``text`` after ``node`` (an operator, a '.', a '(' or a '[')."""
        at = self.source.find(text, self.end(node))
        return at if at >= 0 else self.end(node)

    def error(self, offset: int, message: str):
        self.errors.append((offset, message))
        return ERROR

    def no_overload(self, offset: int, name: str, args: list, member: bool = False):
        if any(a == ERROR for a in args):
            return ERROR
        names = [type_name(a) for a in args]
        signature = f"{names[0]}.({', '.join(names[1:])})" if member else f"({', '.join(names)})"
        return self.error(offset, f"found no matching overload for '{name}' applied to '{signature}'")

    def call(self, offset: int, name: str, overloads: list, args: list, member: bool = False):
        if any(a == ERROR for a in args):
            return ERROR
        for params, result in overloads:
            if len(params) == len(args) and all(_fits(p, a) for p, a in zip(params, args)):
                if any(_loose(a) for a in args) and len({r for p, r in overloads if len(p) == len(args)}) > 1:
                    return DYN
                return result
        return self.no_overload(offset, name, args, member)

    # -- the tree ---------------------------------------------------------------------------------
    def check(self, node, binds: dict):
        kind = node.data
        kids = node.children
        if kind == "expr" and len(kids) == 3:
            cond, then, other = (self.check(k, binds) for k in kids)
            at = self.after("?", kids[0])
            if ERROR in (cond, then, other):
                return ERROR
            if not _fits("bool", cond) or not _fits(then, other):
                return self.no_overload(at, "_?_:_", [cond, then, other])
            return then if not _loose(then) else other
        if kind in ("conditionalor", "conditionaland") and len(kids) == 2:
            left, right = self.check(kids[0], binds), self.check(kids[1], binds)
            op = "||" if kind == "conditionalor" else "&&"
            return self.call(self.after(op, kids[0]), f"_{op}_", OPERATORS[f"_{op}_"], [left, right])
        if kind in ("relation", "addition", "multiplication") and len(kids) == 2:
            name, text = BINARY[kids[0].data]
            left_node = kids[0].children[0]
            left, right = self.check(left_node, binds), self.check(kids[1], binds)
            at = self.after(text, left_node)
            if name in ("_==_", "_!=_"):
                if ERROR in (left, right):
                    return ERROR
                return "bool" if _fits(left, right) else self.no_overload(at, name, [left, right])
            if name == "@in":
                if ERROR in (left, right):
                    return ERROR
                if _loose(right) or (isinstance(right, tuple) and _fits(right[1], left)):
                    return "bool"
                return self.no_overload(at, name, [left, right])
            return self.call(at, name, OPERATORS[name], [left, right])
        if kind == "unary" and len(kids) == 2:
            operand = self.check(kids[1], binds)
            name = "!_" if kids[0].data == "unary_not" else "-_"
            at = self.source.rfind(name[0], 0, self.start(kids[1]))
            return self.call(at, name, OPERATORS[name], [operand])
        if kind == "member_dot":
            target = self.check(kids[0], binds)
            return self.select(target, kids[1].value, self.after(".", kids[0]))
        if kind == "member_index":
            target, index = self.check(kids[0], binds), self.check(kids[1], binds)
            at = self.after("[", kids[0])
            if ERROR in (target, index):
                return ERROR
            if _loose(target):
                return DYN
            if isinstance(target, tuple) and target[0] == "list" and _fits("int", index):
                return target[1]
            if isinstance(target, tuple) and target[0] == "map" and _fits(target[1], index):
                return target[2]
            return self.no_overload(at, "_[_]", [target, index])
        if kind == "member_dot_arg":
            return self.method(kids, binds)
        if kind == "ident":
            name = kids[0].value
            if name in binds:
                return binds[name]
            if name == "device":
                return DEVICE
            return self.error(kids[0].start_pos, f"undeclared reference to '{name}' (in container '')")
        if kind == "ident_arg":
            arg_nodes = list(kids[1].children) if len(kids) > 1 else []
            args = [self.check(k, binds) for k in arg_nodes]
            name = kids[0].value
            if name == "matches" and arg_nodes:
                self.pattern(arg_nodes[0])
            if ERROR in args:
                return ERROR
            if name not in FUNCTIONS:
                return self.error(self.after("(", kids[0]), f"undeclared reference to '{name}' (in container '')")
            if name not in GLOBALS:
                return DYN
            return self.call(self.after("(", kids[0]), name, GLOBALS[name], args)
        if kind == "literal":
            return _literal_type(kids[0].value)
        if kind == "list_lit":
            items = [self.check(k, binds) for k in (kids[0].children if kids else ())]
            if ERROR in items:
                return ERROR
            return ("list", items[0] if items and all(i == items[0] for i in items) else DYN)
        if kind == "map_lit":
            items = [self.check(k, binds) for k in (kids[0].children if kids else ())]
            if ERROR in items:
                return ERROR
            keys, values = items[0::2], items[1::2]
            return ("map", keys[0] if keys and all(k == keys[0] for k in keys) else DYN,
                    values[0] if values and all(v == values[0] for v in values) else DYN)
        if kind == "dot_ident" or kind == "dot_ident_arg":
            return DYN
        result = DYN
        for child in kids:
            if hasattr(child, "data"):
                result = self.check(child, binds)
        return result

    def pattern(self, node) -> None:
        """Note a ``matches`` argument that is a string literal (ValidateRegexLiterals checks it)."""
        tokens = list(self.tokens(node))
        if len(tokens) == 1 and tokens[0].type in ("STRING_LIT", "MLSTRING_LIT") and _bare_literal(node):
            self.patterns.append((tokens[0].start_pos, tokens[0].value))

    def select(self, target, field: str, at: int):
        if target == ERROR:
            return ERROR
        if target == DEVICE:
            if field in DEVICE_FIELDS:
                return DEVICE_FIELDS[field]
            return self.error(at, f"undefined field '{field}'")
        if _loose(target):
            return DYN
        if isinstance(target, tuple) and target[0] == "map":
            return target[2]
        return self.error(at, f"type '{type_name(target)}' does not support field selection")

    def method(self, kids, binds):
        target_node, name_token = kids[0], kids[1]
        args = list(kids[2].children) if len(kids) > 2 else []
        name = name_token.value
        variables = [_bare_ident(a) for a in args]
        if name in TWO_VARIABLE_MACROS and len(args) == 3 and variables[0] and variables[1]:
            target = self.check(target_node, binds)
            inner = dict(binds, **{variables[0]: DYN, variables[1]: DYN})
            result = self.check(args[2], inner)
            if ERROR in (target, result):
                return ERROR
            return "bool" if name in ("all", "exists", "existsOne") else DYN
        if name in MACROS and args and variables[0]:
            target = self.check(target_node, binds)
            element = (target[1] if isinstance(target, tuple) else DYN) if target != ERROR else ERROR
            inner = dict(binds, **{variables[0]: element})
            results = [self.check(a, inner) for a in args[1:]]
            if ERROR in results or target == ERROR:
                return ERROR
            if name == "map":
                return ("list", results[-1])
            if name in ("filter", "sortBy"):
                return target if isinstance(target, tuple) and target[0] == "list" else ("list", element)
            return "bool" if name in ("all", "exists", "exists_one", "existsOne") else DYN
        namespace = _bare_ident(target_node)
        if namespace == "cel" and name == "bind" and len(args) == 3 and variables[0]:
            init = self.check(args[1], binds)
            return self.check(args[2], dict(binds, **{variables[0]: init}))
        if namespace in NAMESPACES and namespace not in binds:   # a qualified function: sets.contains(a, b)
            values = [self.check(a, binds) for a in args]
            if ERROR in values:
                return ERROR
            if namespace != "format" and f"{namespace}.{name}" not in FUNCTIONS:
                return self.error(self.after("(", name_token),
                                  f"undeclared reference to '{namespace}.{name}' (in container '')")
            return DYN
        target = self.check(target_node, binds)
        values = [self.check(a, binds) for a in args]
        if name == "matches" and args:
            self.pattern(args[0])
        if ERROR in values or target == ERROR:
            return ERROR
        if name not in FUNCTIONS:
            return self.error(self.after("(", name_token), f"undeclared reference to '{name}' (in container '')")
        if name not in METHODS:
            return DYN
        return self.call(self.after("(", name_token), name, METHODS[name], [target] + values, member=True)


def _bare_ident(node):
    """The name of an expression that is a bare identifier, else None."""
    while hasattr(node, "data") and len(node.children) == 1 and node.data != "ident":
        node = node.children[0]
    if hasattr(node, "data") and node.data == "ident":
        return node.children[0].value
    return None


def _bare_literal(node) -> bool:
    while hasattr(node, "data") and len(node.children) == 1 and node.data != "literal":
        node = node.children[0]
    return hasattr(node, "data") and node.data == "literal"


def valid_re2(pattern: str) -> bool:
    """Whether Go's regexp (RE2) compiles a pattern, as Python's re does except for what RE2 has and re lacks
    (Unicode classes, ``\\z``) or re has and RE2 refuses (lookarounds, backreferences)."""
    if re.search(r"\(\?<?[=!]|\\[1-9]", pattern):
        return False
    try:
        re.compile(re.sub(r"\\[pP](\{[^}]*\}|[A-Za-z])|\\z", "x", pattern))
    except re.error:
        return False
    return True


def check(expression: str, tree) -> tuple:
    """(errors as (offset, message) in source order, the expression's type) of a parsed selector: the checker's,
    then (when it has none) ValidateRegexLiterals': "invalid matches argument" for a literal pattern Go's regexp
    refuses."""
    checker = Checker(expression)
    result = checker.check(tree, {})
    if not checker.errors:
        for offset, literal in checker.patterns:
            try:
                pattern = ast.literal_eval(literal)
            except (ValueError, SyntaxError):
                continue
            if isinstance(pattern, str) and not valid_re2(pattern):
                checker.errors.append((offset, "invalid matches argument"))
    return sorted(checker.errors, key=lambda e: e[0]), result
