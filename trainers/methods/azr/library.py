"""A small library of simple Python programs, written for Absolute Zero's cold start and its optional
richer seed buffers (`dataset: library`): each program with a one-line description (the induction
message) and a few argument lists. Outputs are never written here: the sandboxed executor computes
them. None of these programs comes from an evaluation set (the cold start checks it against the sets
it is given).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Program:
    code: str  # defines f
    message: str  # what f does, as an induction proposer would describe it
    inputs: tuple[str, ...]  # argument lists, as an input fence holds them


def _program(code: str, message: str, *inputs: str) -> Program:
    return Program(code.strip("\n"), message, inputs)


PROGRAMS: tuple[Program, ...] = (
    _program(
        """
def f(s):
    return s[::-1]
""",
        "Reverse the string.",
        "'abc'",
        "'level up'",
        "'Python'",
        "'racecar'",
    ),
    _program(
        """
def f(nums):
    return sum(x for x in nums if x % 2 == 0)
""",
        "Add up the even numbers.",
        "[1, 2, 3, 4]",
        "[5, 7, 9]",
        "[10, -2, 3]",
        "[0, 8, 8, 1]",
    ),
    _program(
        """
def f(s):
    return sum(1 for c in s.lower() if c in 'aeiou')
""",
        "Count the vowels.",
        "'banana'",
        "'sky'",
        "'Education'",
        "'queue'",
    ),
    _program(
        """
def f(n):
    total = 1
    for k in range(2, n + 1):
        total *= k
    return total
""",
        "The factorial of n.",
        "0",
        "3",
        "5",
        "7",
    ),
    _program(
        """
def f(nums):
    return max(nums) - min(nums)
""",
        "The spread between the largest and smallest number.",
        "[3, 9, 1]",
        "[5]",
        "[-4, 4, 0]",
        "[10, 2, 7, 2]",
    ),
    _program(
        """
def f(words):
    return ' '.join(w.capitalize() for w in words)
""",
        "Capitalise each word and join them with spaces.",
        "['hello', 'world']",
        "['a']",
        "['open', 'source', 'code']",
        "['x', 'Y', 'zz']",
    ),
    _program(
        """
def f(a, b):
    while b:
        a, b = b, a % b
    return a
""",
        "The greatest common divisor.",
        "12, 18",
        "7, 3",
        "100, 75",
        "9, 0",
    ),
    _program(
        """
def f(s):
    out = {}
    for c in s:
        out[c] = out.get(c, 0) + 1
    return out
""",
        "Count how often each character appears.",
        "'hello'",
        "'aab'",
        "'xyz'",
        "'mississippi'",
    ),
    _program(
        """
def f(nums, k):
    return [x * k for x in nums]
""",
        "Multiply every number by k.",
        "[1, 2, 3], 2",
        "[], 5",
        "[-1, 4], -3",
        "[7], 0",
    ),
    _program(
        """
def f(n):
    digits = str(abs(n))
    return sum(int(d) for d in digits)
""",
        "The sum of the digits.",
        "123",
        "-45",
        "9009",
        "7",
    ),
    _program(
        """
def f(nums):
    seen, out = set(), []
    for x in nums:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
""",
        "Remove repeated numbers, keeping the first of each.",
        "[1, 2, 1, 3]",
        "[4, 4, 4]",
        "[5, 6]",
        "[2, 1, 2, 1]",
    ),
    _program(
        """
def f(s):
    return s == s[::-1]
""",
        "Whether the string reads the same backwards.",
        "'noon'",
        "'moon'",
        "'a'",
        "'abca'",
    ),
    _program(
        """
def f(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
        "The n-th Fibonacci number.",
        "0",
        "1",
        "6",
        "10",
    ),
    _program(
        """
def f(items):
    return sorted(items, key=len)
""",
        "Sort the strings from shortest to longest.",
        "['ccc', 'a', 'bb']",
        "['same', 'size']",
        "['', 'x']",
        "['tree', 'go', 'apple']",
    ),
    _program(
        """
def f(nums):
    out = []
    total = 0
    for x in nums:
        total += x
        out.append(total)
    return out
""",
        "The running totals.",
        "[1, 2, 3]",
        "[5, -5, 5]",
        "[]",
        "[10]",
    ),
    _program(
        """
def f(s, c):
    return s.replace(c, '')
""",
        "Delete every copy of the character c.",
        "'banana', 'a'",
        "'hello', 'l'",
        "'abc', 'z'",
        "'aaaa', 'a'",
    ),
    _program(
        """
def f(d):
    return sorted(k for k, v in d.items() if v > 1)
""",
        "The keys whose value is above 1, sorted.",
        "{'a': 1, 'b': 2, 'c': 3}",
        "{}",
        "{'x': 0}",
        "{'m': 5, 'k': 2}",
    ),
    _program(
        """
def f(n):
    return [i for i in range(1, n + 1) if n % i == 0]
""",
        "All divisors of n.",
        "6",
        "7",
        "12",
        "1",
    ),
    _program(
        """
def f(a, b):
    return [x for x in a if x in b]
""",
        "The elements of a that are also in b, in a's order.",
        "[1, 2, 3], [2, 3, 4]",
        "[5, 6], [7]",
        "['a', 'b'], ['b']",
        "[1, 1, 2], [1]",
    ),
    _program(
        """
def f(s):
    words = s.split()
    return len(words), max(len(w) for w in words)
""",
        "The number of words and the length of the longest one.",
        "'the quick brown fox'",
        "'hi'",
        "'a bb ccc'",
        "'one two'",
    ),
    _program(
        """
def f(matrix):
    return [list(row) for row in zip(*matrix)]
""",
        "Transpose the matrix.",
        "[[1, 2], [3, 4]]",
        "[[1, 2, 3]]",
        "[[5], [6]]",
        "[[0, 1], [1, 0]]",
    ),
    _program(
        """
def f(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps
""",
        "How many Collatz steps it takes to reach 1.",
        "1",
        "6",
        "7",
        "16",
    ),
    _program(
        """
def f(s):
    return ''.join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(s))
""",
        "Alternate upper and lower case, starting with upper.",
        "'hello'",
        "'ABC'",
        "'a'",
        "'python'",
    ),
    _program(
        """
def f(nums, target):
    for i, x in enumerate(nums):
        if x == target:
            return i
    return -1
""",
        "The index of the first occurrence of target, or -1.",
        "[4, 5, 6], 5",
        "[1, 2], 3",
        "[7, 7], 7",
        "[], 1",
    ),
    _program(
        """
def f(s):
    count, best, prev = 0, 0, ''
    for c in s:
        count = count + 1 if c == prev else 1
        best = max(best, count)
        prev = c
    return best
""",
        "The length of the longest run of one repeated character.",
        "'aabbbc'",
        "'abc'",
        "'zzzz'",
        "'abba'",
    ),
    _program(
        """
def f(n):
    return bin(n)[2:].count('1')
""",
        "How many 1 bits n has.",
        "0",
        "5",
        "255",
        "8",
    ),
    _program(
        """
def f(prices):
    best, low = 0, prices[0]
    for p in prices[1:]:
        best = max(best, p - low)
        low = min(low, p)
    return best
""",
        "The best profit from buying once and selling later.",
        "[7, 1, 5, 3, 6]",
        "[5, 4, 3]",
        "[1, 2]",
        "[3]",
    ),
    _program(
        """
def f(words):
    groups = {}
    for w in words:
        groups.setdefault(w[0], []).append(w)
    return groups
""",
        "Group the words by their first letter.",
        "['apple', 'avocado', 'bean']",
        "['x']",
        "['cat', 'cow', 'dog']",
        "['b', 'a', 'b']",
    ),
    _program(
        """
def f(nums):
    evens = [x for x in nums if x % 2 == 0]
    odds = [x for x in nums if x % 2]
    return evens + odds
""",
        "Put the even numbers first, then the odd ones, each in order.",
        "[1, 2, 3, 4]",
        "[3, 5]",
        "[8, 1, 6]",
        "[]",
    ),
    _program(
        """
def f(s):
    return s.count('(') == s.count(')') and not s.startswith(')')
""",
        "Whether the brackets are equal in number and the string does not start with a closing one.",
        "'(())'",
        "')('",
        "'(()'",
        "''",
    ),
    _program(
        """
def f(a, b):
    return a * b - (a + b)
""",
        "The product minus the sum.",
        "3, 4",
        "0, 5",
        "-2, 2",
        "10, 10",
    ),
    _program(
        """
def f(nums):
    return [nums[i] + nums[i + 1] for i in range(len(nums) - 1)]
""",
        "The sums of neighbouring pairs.",
        "[1, 2, 3]",
        "[5]",
        "[0, -1, 1, 4]",
        "[10, 20]",
    ),
    _program(
        """
def f(text, n):
    return [text[i:i + n] for i in range(0, len(text), n)]
""",
        "Cut the text into pieces of n characters.",
        "'abcdef', 2",
        "'hello', 3",
        "'x', 4",
        "'abcd', 1",
    ),
    _program(
        """
def f(grid):
    return sum(sum(row) for row in grid)
""",
        "The total of all numbers in the grid.",
        "[[1, 2], [3, 4]]",
        "[[0]]",
        "[[5, -5], [1, 1]]",
        "[[], [2]]",
    ),
    _program(
        """
def f(s):
    vowels = 'aeiou'
    return ''.join(c for c in s if c not in vowels)
""",
        "Remove the lowercase vowels.",
        "'programming'",
        "'aeiou'",
        "'rhythm'",
        "'Apple'",
    ),
    _program(
        """
def f(n):
    if n < 2:
        return False
    for k in range(2, int(n ** 0.5) + 1):
        if n % k == 0:
            return False
    return True
""",
        "Whether n is a prime number.",
        "2",
        "9",
        "17",
        "1",
    ),
)
