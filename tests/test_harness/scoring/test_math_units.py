r"""Math rule: units: a letter after a number, an answer's unit against the gold's or the question's
(`math_normalise.answer_unit`, `units_disagree`, `units.asked_units`)."""

from __future__ import annotations

from scoring_cases import (
    ANGLE,
    AREA_METERS,
    AREA_UNITS,
    CUBE,
    FAR,
    PAINT,
    SPEED,
    WHEEL,
    right_and_wrong,
    verdict_test,
)

from harness.scoring.math_normalise import answer_unit
from harness.scoring.math_question import letter_case_differs, units_disagree
from harness.scoring.units import asked_units

# (label, answer, gold, expected value): the audit's pattern 2, rules 3's units
CASES = [
    # 2. a letter is a unit only after a number, and not when the gold uses it as a symbol
    ("2", r"\boxed{\frac{37m}{4}}", r"\frac{37m}{4}", 1.0),
    ("2", r"\boxed{\frac{37m}{4}}", r"\frac{37}{4}", 0.0),
    ("2", r"\boxed{\frac{37}{4}}", r"\frac{37m}{4}", 0.0),
    ("2", r"\boxed{b = m}", "b = m", 1.0),
    ("2", r"\boxed{b = m}", "b", 0.0),
    ("2", r"\boxed{b = n}", "b = m", 0.0),
    ("2", r"\boxed{3m}", "3m", 1.0),
    ("2", r"\boxed{3}", "3m", 0.0),
    ("2", r"\boxed{5 \text{ cm}}", "5", 1.0),
    ("2", r"\boxed{6 \text{ cm}}", "5", 0.0),
    ("2", r"\boxed{1.5 m/s}", "1.5", 1.0),
    ("2", r"\boxed{5x}", "5", 0.0),
    *right_and_wrong("6 units", r"\boxed{6 \text{ m}}", r"\boxed{6 \text{ km}}", "6", FAR),
    *right_and_wrong(
        "6 units", r"\boxed{5.4 \text{ cents}}", r"\boxed{5.4 \text{ dollars}}", r"5.4 \text{ cents}"
    ),
    *right_and_wrong("6 units", r"\boxed{48.6^\circ}", r"\boxed{48.6 \text{ rad}}", "48.6", ANGLE),
    ("6 units", r"\boxed{6 \text{ km}}", "6", 1.0),  # neither gold nor question names a unit: unchecked
    # both spellings of one unit agree; another unit, or another power of it, does not
    *right_and_wrong("6 units", r"\boxed{1625\text{ cm}^2}", r"\boxed{1625\text{ cm}}", "1625", PAINT),
    *right_and_wrong(
        "6 units", r"\boxed{1625 \, \mathrm{cm}^2}", r"\boxed{1625 \, \mathrm{m}^2}", "1625", PAINT
    ),
    *right_and_wrong("6 units", r"\boxed{216\text{ in}^3}", r"\boxed{216\text{ in}^2}", "216", CUBE),
    *right_and_wrong(
        "6 units",
        r"\boxed{864 \text{ square inches}}",
        r"\boxed{864 \text{ inches}}",
        r"864 \mbox{ inches}^2",
    ),
    *right_and_wrong(
        "6 units", r"\boxed{864 \text{ sq in}}", r"\boxed{864 \text{ sq ft}}", r"864 \mbox{ inches}^2"
    ),
    *right_and_wrong("6 units", r"\boxed{60 \text{ mph}}", r"\boxed{60 \text{ km/h}}", "60", SPEED),
    *right_and_wrong("6 units", r"\boxed{24 \text{ units}^2}", r"\boxed{24 \text{ units}}", "24", AREA_UNITS),
    *right_and_wrong("6 units", r"\boxed{24 \text{ m}^2}", r"\boxed{24 \text{ cm}^2}", "24", AREA_METERS),
    *right_and_wrong("6 units", r"\boxed{2\pi \text{ m}}", r"\boxed{2\pi \text{ km}}", r"2\pi", WHEEL),
    # the unit of a value stated without a box is checked too
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nTherefore, the distance it rolls is 6 meters.",
        "Multiply.\n\nTherefore, the distance it rolls is 6 km.",
        "6",
        FAR,
    ),
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nSo the distance is **6 meters**.",
        "So the distance is **6 kilometers**.",
        "6",
        FAR,
    ),
    *right_and_wrong("6 units", "Multiply.\n\nThe distance is **6 m**", "The distance is **6 km**", "6", FAR),
    *right_and_wrong(
        "6 units",
        "Multiply.\n\nThus the distance is $2\\pi$ meters.",
        "Thus the distance is $2\\pi$ km.",
        r"2\pi",
        WHEEL,
    ),
    *right_and_wrong(
        "6 units",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 rad/s",
        "Balance the torques.\n\nFinal answer: \\(\\omega_{ss}\\) = 1000 deg/s",
        "1000",
        "What is the steady-state speed, in radians per second?",
    ),
]


test_verdict = verdict_test(CASES)


def test_units_and_case():
    assert answer_unit(r"6 \text{ kilometers}", set()) == "km"
    assert answer_unit(r"90^\circ", set()) == "deg"
    assert answer_unit("6", set()) is None
    assert units_disagree("6 km", "6", FAR) and not units_disagree("6 meters", "6", FAR)
    assert not units_disagree("27 miles", "27", "Cities $A$ and $B$. How many miles from City $A$?")
    assert units_disagree("27 km", "27", "Cities $A$ and $B$. How many miles from City $A$?")
    assert letter_case_differs("100\\sqrt{t}", "100T^{1/2}") and not letter_case_differs("2T", "T")


def test_units_are_read_whole():
    assert answer_unit(r"1625\text{ cm}^2", set()) == answer_unit("1625 square centimeters", set()) == "cm^2"
    assert answer_unit(r"864 \text{ sq in}", set()) == answer_unit(r"864 \mbox{ inches}^2", set()) == "in^2"
    assert answer_unit(r"60 \text{ mph}", set()) == answer_unit("60 miles per hour", set()) == "mi/h"
    assert answer_unit(r"9.8 \text{ m s}^{-2}", set()) == answer_unit(r"9.8\text{ m/s}^2", set()) == "m/s^2"
    assert answer_unit("27 miles each way", set()) == "mi" and answer_unit("7 nickels", set()) == "nickels"
    assert asked_units(PAINT) == {"cm^2"} and asked_units(CUBE) == {"in^3"} and asked_units(SPEED) == {"mi/h"}
    assert asked_units(AREA_UNITS) == {"unit^2"} and asked_units(FAR) == {"m"}
    assert asked_units("What is the price in Moldavia, in dollars per bushel?") == {"dollar/bushel"}
    assert asked_units("Find the speed (in $\\mathrm{~cm}$ per second).") == {"cm/s"}
    assert asked_units("Give the speed in m/s.") == set()  # a lone letter may be a symbol
    assert asked_units("What is the largest in $A_{1}$?") == asked_units("How many are in $N$?") == set()
    assert asked_units("In how many ways can 8 people sit in a row?") == set()
    assert units_disagree(r"1625 \text{ cm}", "1625", PAINT) and units_disagree("60 km/h", "60", SPEED)
