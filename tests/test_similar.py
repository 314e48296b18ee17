"""newsdesk.core.similar: the content hash and the near-copy sketch (issue 14, point 4)."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from newsdesk.core.similar import (
    MIN_SHARED,
    NEAR_DUPLICATE_THRESHOLD,
    SHINGLE_SIZE,
    SKETCH_SIZE,
    content_hash,
    normalised_text,
    shared,
    similarity,
    sketch,
)

WIRE = Path(__file__).resolve().parent / "pages" / "wire"


def wire(story: str, text: str) -> str:
    return (WIRE / story / f"{text}.txt").read_text(encoding="utf-8")


# normalised_text and content_hash


def test_whitespace_width_case_and_punctuation_do_not_change_the_hash():
    text = "국회는 4일 “예산안”을 통과시켰다... The House voted 184-79."
    variants = [
        "  국회는\t4일\n\n“예산안”을   통과시켰다... The House voted 184-79.  ",
        "국회는 ４일 “예산안”을 통과시켰다... ＴＨＥ ＨＯＵＳＥ voted 184-79.",  # full width
        '국회는 4일 "예산안"을 통과시켰다… the house VOTED 184–79.',  # quotes, ellipsis, dash
        "국회는 4일\u200b “예산안”을 통과\u00ad시켰다... The House voted 184-79.",  # ZWSP, SHY
    ]
    assert {content_hash(variant) for variant in variants} == {content_hash(text)}
    assert normalised_text(text) == "국회는 4일 예산안 을 통과시켰다 the house voted 184 79"


def test_a_changed_word_or_number_changes_the_hash():
    base = "국회는 4일 728조3천억원 규모의 예산안을 통과시켰다. 성장률은 1.5%다."
    assert content_hash(base) != content_hash(base.replace("728조", "727조"))
    assert content_hash(base) != content_hash(base.replace("통과시켰다", "부결시켰다"))
    # punctuation becomes a space, so a decimal point still separates digits
    assert content_hash(base) != content_hash(base.replace("1.5%", "15%"))
    assert len(content_hash(base)) == 64
    assert int(content_hash(base), 16) >= 0


def test_bylines_addresses_credits_and_notices_are_not_the_text():
    body = "국회는 4일 본회의를 열어 예산안을 가결했다.\n정부는 30일 배정 계획을 의결한다."
    printed = [
        "(서울=연합뉴스) 김정민 이다솜 기자 = " + body + "\njmkim@yna.example\n"
        "<저작권자(c) 연합뉴스, 무단 전재-재배포, AI 학습 및 활용 금지>",
        "[서울=뉴시스]최유진 기자 = " + body + "\nchoyj@newsis.example\n"
        "<저작권자ⓒ 공감언론 뉴시스통신사. 무단전재-재배포 금지.>",
        "[한빛일보 김철수 기자] " + body + "\n김철수 기자 cs@hanbit.example\n"
        "Copyright ⓒ 한빛일보. All rights reserved.",
        "【서울=뉴시스】 " + body + "\n박성훈·이다솜 기자\n© 경인매일",
    ]
    assert {normalised_text(text) for text in printed} == {normalised_text(body)}
    english = "The House passed the budget.\nIt goes to the Senate."
    assert normalised_text(
        "By Jane Doe, CNN\nWASHINGTON (AP) — " + english + "\nCopyright 2026 The Associated"
        " Press. All rights reserved."
    ) == normalised_text(english)


def test_what_only_looks_like_boilerplate_is_kept():
    # a sentence about a reporter, a long paragraph about copyright, a bracket that is no credit
    kept = [
        "경찰은 홍길동 기자가 취재 중 다쳤다고 밝혔다.",
        "법원은 " + "기사를 무단 전재한 업체에 배상을 명령했다. " * 10,
        "(사진) 시민들이 광장에 모였다.",
        "By the river, the town held its vote.",
    ]
    for line in kept:
        assert normalised_text(line), line
    assert "무단 전재한" in normalised_text(kept[1])
    assert normalised_text(kept[0]) == "경찰은 홍길동 기자가 취재 중 다쳤다고 밝혔다"


def test_lines_built_to_make_a_pattern_backtrack_are_read_as_text():
    # 25 "기자 " in a row kept an earlier byline pattern busy for 6 s, and every five more
    # multiplied it by 25; a long word with no "@" makes an unbounded e-mail pattern
    # quadratic. These are text, and come back as it.
    assert normalised_text("기자 " * 66 + "끝남") == ("기자 " * 66 + "끝남")
    assert normalised_text("a" * 100_000 + " b") == "a" * 100_000 + " b"
    names = "홍길동 " * 5_000 + "끝"
    assert normalised_text("(서울=연합뉴스) " + names) == names


def test_a_verbatim_korean_republication_has_the_same_hash():
    # 바른경제 and 새벽신문 reprinted the agency's story with curly quotes and their own footer
    for story in ("02-base-rate", "08-jeonse-fraud"):
        assert content_hash(wire(story, "copy-a")) == content_hash(wire(story, "original"))
    # a rewritten lead is no longer the same text
    assert content_hash(wire("01-budget", "copy-a")) != content_hash(wire("01-budget", "original"))


# sketch and similarity


def test_sketch_values_are_signed_64_bit_sorted_and_at_most_the_sketch_size():
    values = sketch(wire("01-budget", "original"))
    assert len(values) == SKETCH_SIZE
    assert values == sorted(set(values))
    assert all(-(2**63) <= value < 2**63 for value in values)
    assert any(value < 0 for value in values)  # the signed reading of the digest
    assert len(sketch("가나다라마바사아자차카타" * 3)) < SKETCH_SIZE  # few distinct shingles


def test_texts_shorter_than_a_shingle_have_no_sketch():
    assert sketch("") == []
    assert sketch("가나다 라마") == []  # five characters once spaces are gone
    assert len(sketch("가나다 라마바")) == 1  # exactly one shingle
    assert SHINGLE_SIZE == 6
    assert similarity([], sketch(wire("01-budget", "original"))) == 0.0
    assert similarity([], []) == 0.0


@pytest.mark.integration
def test_a_sketch_is_the_same_in_another_process():
    text = wire("01-budget", "copy-b")
    program = (
        "import json, sys\n"
        "from newsdesk.core.similar import sketch\n"
        "print(json.dumps(sketch(sys.stdin.read())))\n"
    )
    for seed in ("1", "4242"):  # str hashing differs between these processes
        out = subprocess.run(
            [sys.executable, "-c", program],
            input=text,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        ).stdout
        assert json.loads(out) == sketch(text)


def test_identical_texts_are_one_and_unrelated_ones_about_zero():
    budget, quake = wire("01-budget", "original"), wire("09-earthquake", "original")
    assert similarity(sketch(budget), sketch(budget)) == 1.0
    assert similarity(sketch(budget), sketch(quake)) < 0.05
    assert similarity(sketch(budget), sketch(quake)) == similarity(sketch(quake), sketch(budget))


def test_a_korean_wire_copy_is_a_near_copy_and_another_agencys_report_is_not():
    original = sketch(wire("01-budget", "original"))
    # 경인매일: a regional lead, a paragraph dropped, one added, the last sentence cut
    copy = sketch(wire("01-budget", "copy-b"))
    assert similarity(original, copy) >= NEAR_DUPLICATE_THRESHOLD
    assert shared(original, copy) >= MIN_SHARED  # the store's index finds it as a candidate
    # 뉴시스's own report of the same vote: the same figures and the same quoted sentence
    other = sketch(wire("01-budget", "other"))
    assert similarity(original, other) < NEAR_DUPLICATE_THRESHOLD
    assert similarity(copy, other) < NEAR_DUPLICATE_THRESHOLD


def test_the_estimate_follows_the_exact_jaccard_similarity():
    rng = random.Random(14)
    syllables = [chr(code) for code in range(0xAC00, 0xAC00 + 400)]
    words = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(3000)]
    base = words[:600]
    for keep in (100, 300, 500):  # share the first `keep` words, then go their own ways
        a = " ".join(base)
        b = " ".join(base[:keep] + words[1000 : 1000 + 600 - keep])
        exact = similarity(sketch(a, size=1 << 20), sketch(b, size=1 << 20))  # whole sets
        assert abs(similarity(sketch(a), sketch(b)) - exact) < 0.15, keep


def test_min_shared_is_the_fewest_values_an_estimate_at_the_threshold_needs():
    assert math.ceil(NEAR_DUPLICATE_THRESHOLD * SKETCH_SIZE) == MIN_SHARED


def test_no_pair_at_or_above_the_threshold_shares_fewer_than_min_shared():
    # texts that share a run of words and differ in the rest, from alike to unrelated; the
    # store's candidates (MIN_SHARED common values) must include every near-copy among them
    rng = random.Random(20)
    syllables = [chr(code) for code in range(0xAC00, 0xAC00 + 2000)]

    def words(n: int) -> list[str]:
        return ["".join(rng.choices(syllables, k=3)) for _ in range(n)]

    near = close_calls = 0
    for common in range(0, 401, 20):
        for own in (20, 60, 150, 300):
            middle = words(common)
            a = sketch(" ".join(words(own) + middle))
            b = sketch(" ".join(middle + words(rng.randint(own // 2, own))))
            if similarity(a, b) >= NEAR_DUPLICATE_THRESHOLD:
                near += 1
                close_calls += similarity(a, b) < NEAR_DUPLICATE_THRESHOLD + 0.1
                assert shared(a, b) >= MIN_SHARED, (common, own)
    assert near >= 20
    assert close_calls >= 3  # pairs just above the threshold, the ones the index could miss


@pytest.mark.parametrize("story", sorted(p.name for p in WIRE.iterdir() if p.is_dir()))
def test_every_story_is_farther_from_another_agencys_report_than_the_threshold(story):
    other = sketch(wire(story, "other"))
    for text in ("original", "copy-a", "copy-b"):
        assert similarity(other, sketch(wire(story, text))) < NEAR_DUPLICATE_THRESHOLD
