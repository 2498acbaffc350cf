"""Go's ``sort.Slice`` (pattern-defeating quicksort, Go 1.19+), for exact tie behaviour.

kube-scheduler sorts with ``sort.Slice``, which is not stable: elements that compare equal end up in an
order that depends on the algorithm. Where that order is observable (preemption reprieve order), Python's
stable sort would differ, so this module reproduces Go's algorithm step by step. ``less(a, b)`` is called
on elements, in the same sequence as Go calls ``Less(i, j)``.
"""
from __future__ import annotations

_MAX_INSERTION = 12
_UNKNOWN_HINT, _INCREASING_HINT, _DECREASING_HINT = 0, 1, 2
_MASK64 = (1 << 64) - 1


def sort_slice(data: list, less) -> None:
    """sort.Slice(data, less), in place."""
    n = len(data)
    _pdqsort(data, less, 0, n, n.bit_length())


def _insertion_sort(data, less, a, b):
    for i in range(a + 1, b):
        j = i
        while j > a and less(data[j], data[j - 1]):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1


def _sift_down(data, less, lo, hi, first):
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and less(data[first + child], data[first + child + 1]):
            child += 1
        if not less(data[first + root], data[first + child]):
            return
        data[first + root], data[first + child] = data[first + child], data[first + root]
        root = child


def _heap_sort(data, less, a, b):
    first, hi = a, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(data, less, i, hi, first)
    for i in range(hi - 1, -1, -1):
        data[first], data[first + i] = data[first + i], data[first]
        _sift_down(data, less, 0, i, first)


def _pdqsort(data, less, a, b, limit):
    was_balanced = was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(data, less, a, b)
            return
        if limit == 0:
            _heap_sort(data, less, a, b)
            return
        if not was_balanced:
            _break_patterns(data, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(data, less, a, b)
        if hint == _DECREASING_HINT:
            _reverse_range(data, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING_HINT
        if was_balanced and was_partitioned and hint == _INCREASING_HINT:
            if _partial_insertion_sort(data, less, a, b):
                return
        if a > 0 and not less(data[a - 1], data[pivot]):
            a = _partition_equal(data, less, a, b, pivot)
            continue
        mid, already = _partition(data, less, a, b, pivot)
        was_partitioned = already
        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _pdqsort(data, less, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _pdqsort(data, less, mid + 1, b, limit)
            b = mid


def _partition(data, less, a, b, pivot):
    data[a], data[pivot] = data[pivot], data[a]
    i, j = a + 1, b - 1
    while i <= j and less(data[i], data[a]):
        i += 1
    while i <= j and not less(data[j], data[a]):
        j -= 1
    if i > j:
        data[j], data[a] = data[a], data[j]
        return j, True
    data[i], data[j] = data[j], data[i]
    i += 1
    j -= 1
    while True:
        while i <= j and less(data[i], data[a]):
            i += 1
        while i <= j and not less(data[j], data[a]):
            j -= 1
        if i > j:
            break
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
    data[j], data[a] = data[a], data[j]
    return j, False


def _partition_equal(data, less, a, b, pivot):
    data[a], data[pivot] = data[pivot], data[a]
    i, j = a + 1, b - 1
    while True:
        while i <= j and not less(data[a], data[i]):
            i += 1
        while i <= j and less(data[a], data[j]):
            j -= 1
        if i > j:
            return i
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1


def _partial_insertion_sort(data, less, a, b):
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not less(data[i], data[i - 1]):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        data[i], data[i - 1] = data[i - 1], data[i]
        if i - a >= 2:
            for j in range(i - 1, 0, -1):
                if not less(data[j], data[j - 1]):
                    break
                data[j], data[j - 1] = data[j - 1], data[j]
        if b - i >= 2:
            for j in range(i + 1, b):
                if not less(data[j], data[j - 1]):
                    break
                data[j], data[j - 1] = data[j - 1], data[j]
    return False


def _break_patterns(data, a, b):
    length = b - a
    if length >= 8:
        r = length
        modulus = 1 << length.bit_length()
        idx = a + (length // 4) * 2 - 1
        while idx <= a + (length // 4) * 2 + 1:
            r ^= (r << 13) & _MASK64
            r ^= r >> 7
            r ^= (r << 17) & _MASK64
            other = r & (modulus - 1)
            if other >= length:
                other -= length
            data[idx], data[a + other] = data[a + other], data[idx]
            idx += 1


def _choose_pivot(data, less, a, b):
    shortest_ninther, max_swaps = 50, 4 * 3
    n = b - a
    swaps = [0]
    i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
    if n >= 8:
        if n >= shortest_ninther:
            i = _median(data, less, i - 1, i, i + 1, swaps)
            j = _median(data, less, j - 1, j, j + 1, swaps)
            k = _median(data, less, k - 1, k, k + 1, swaps)
        j = _median(data, less, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING_HINT
    if swaps[0] == max_swaps:
        return j, _DECREASING_HINT
    return j, _UNKNOWN_HINT


def _order2(data, less, a, b, swaps):
    if less(data[b], data[a]):
        swaps[0] += 1
        return b, a
    return a, b


def _median(data, less, a, b, c, swaps):
    a, b = _order2(data, less, a, b, swaps)
    b, c = _order2(data, less, b, c, swaps)
    a, b = _order2(data, less, a, b, swaps)
    return b


def _reverse_range(data, a, b):
    i, j = a, b - 1
    while i < j:
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
