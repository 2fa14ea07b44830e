#!/usr/bin/env bash
# The three-point evaluation of a cold-started self-play run (README of issue 35, docs/methods/*.md):
# the base model, OUT/cold-start (after the supervised cold start) and OUT/checkpoint-N (after
# self-play), each evaluated the same way, then `harness regress` between consecutive points.
#   scripts/cold_start_eval.sh spell BASE_MODEL RUN_DIR CHECKPOINT EVAL_DIR HELDOUT_DIR
#   scripts/cold_start_eval.sh azr   BASE_MODEL RUN_DIR CHECKPOINT EVAL_DIR DATA_DIR
# SPELL: held-out document questions (`python scripts/spell_heldout.py --out HELDOUT_DIR --reports 40`)
# at T=0.7 with the questions' own prompt; SPELL_SETS picks the files, scorers and samples per item.
# AZR: the first 100 CRUXEval-O items, greedy.
set -euo pipefail
SPELL_SETS=${SPELL_SETS:-qa:cem:4 math:numeric:4 mc:choice:4}
method=$1 base=$2 run=$3 step=$4 out=$5 data=$6
declare -A model=([base]=$base [cold]=$run/cold-start [selfplay]=$run/checkpoint-$step)
evaluate() {  # point, name, extra eval arguments...
    local point=$1 name=$2
    shift 2
    harness eval --model "${model[$point]}" --out "$out/$point-$name" --seed 1 "$@"
}
for point in base cold selfplay; do
    if [ "$method" = spell ]; then
        for set in $SPELL_SETS; do  # name:scorer:n
            IFS=: read -r name scorer n <<<"$set"
            evaluate $point $name --benchmarks "jsonl:$data/heldout-$name.jsonl" --scorer "$scorer" \
                --prompt-template '{problem}' --n "$n" --temperature 0.7 --top-p 0.95 --max-tokens 64
        done
    else
        evaluate $point cruxeval --benchmarks cruxeval_o --data-dir "$data" --limit 100 --n 1 \
            --temperature 0 --max-tokens 64
    fi
done
names=$([ "$method" = spell ] && for set in $SPELL_SETS; do echo "${set%%:*}"; done || echo cruxeval)
for name in $names; do
    for pair in base:cold cold:selfplay base:selfplay; do
        a=${pair%%:*} b=${pair##*:}
        echo "== $name: $a -> $b"
        harness regress "$out/$a-$name" "$out/$b-$name" --json "$out/regress-$name-$a-$b.json" || echo "(regress exit $?)"
    done
done
