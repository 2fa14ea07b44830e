"""Absolute Zero (AZR paper, §3): one policy proposes and solves deduction, abduction and induction
tasks over Python programs, validated and checked in the harness sandbox, trained with TRR++."""
