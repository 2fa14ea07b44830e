"""Prompts and engine options shared by the real-engine tests."""

PROMPTS = [
    "What is 2 + 2?",
    "Find the area of a triangle with sides 3, 4 and 5.",
    "Let x be real. Solve x^2 = 9.",
    "How many primes are there below 100?",
    "Compute 17 * 23.",
    "A fair coin is tossed 3 times. What is the probability of exactly two heads?",
]
VLLM_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--gpu-memory-utilization", "0.2")
