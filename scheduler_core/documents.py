"""Decoding uploaded JSON and YAML documents safely: no object-constructing YAML tags, no aliases, and at most
MAX_DEPTH levels of nesting (Python's parsers and everything that walks a document recurse per level, so a
document nested 100,000 deep would end in RecursionError; kube's own decoders stop at a depth limit too)."""
from __future__ import annotations

import json
import re

import yaml

MAX_DEPTH = 100


def depth_message(limit: int = MAX_DEPTH) -> str:
    return f"exceeded max depth of {limit}"


class DepthError(ValueError):
    """A JSON document nested deeper than MAX_DEPTH."""

    def __init__(self):
        super().__init__(depth_message())


def check_depth(doc, limit: int = MAX_DEPTH) -> None:
    """Raise DepthError when lists and objects in ``doc`` nest deeper than ``limit`` (iteratively)."""
    stack = [(doc, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > limit:
            raise DepthError()
        children = obj.values() if isinstance(obj, dict) else obj
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def load_json(text, **kwargs):
    """json.loads (with its keyword arguments), refusing documents nested deeper than MAX_DEPTH (DepthError, a
    ValueError)."""
    try:
        doc = json.loads(text, **kwargs)
    except RecursionError:
        raise DepthError() from None
    if isinstance(doc, (dict, list)):
        check_depth(doc)
    return doc


class SafeLoader(yaml.SafeLoader):
    """Safe YAML: no object-constructing tags; aliases are refused (no billion-laughs expansion); collections
    nest at most MAX_DEPTH deep."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed", event.start_mark)
        if self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            if self._depth >= MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, depth_message(), self.peek_event().start_mark)
            self._depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)


def safe_yaml_load(text):
    """One YAML document, loaded safely (raises yaml.YAMLError)."""
    return yaml.load(text, Loader=SafeLoader)


def safe_yaml_load_all(text) -> list:
    """Every YAML document of a stream, loaded safely (raises yaml.YAMLError)."""
    return list(yaml.load_all(text, Loader=SafeLoader))


_PATH_STEP = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def yaml_error_place(err: yaml.YAMLError) -> str:
    """"line L, column C: problem" of a YAML error with a mark, else its first line."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark else problem


def field_line(text: str, path: str) -> int | None:
    """The 1-based line of ``text`` (one YAML or JSON document) that holds the field at a kube field path such as
    ``spec.containers[0].resources.requests[cpu]``: the deepest part of the path the document has; None when the
    text does not parse or has none of it."""
    try:
        node = yaml.compose(text, Loader=SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for step in _PATH_STEP.finditer(path):
        key = step.group(1) if step.group(1) is not None else step.group(2)
        if isinstance(node, yaml.MappingNode):
            value = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
            if value is None:
                break
            line, node = value[0].start_mark.line + 1, value[1]
        elif isinstance(node, yaml.SequenceNode) and key.isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]
            line = node.start_mark.line + 1
        else:
            break
    return line
