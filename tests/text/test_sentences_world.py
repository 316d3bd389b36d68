"""Sentence ends of every script (Unicode Sentence_Terminal), decimals of any digits, closers kept."""

import pytest

from chunkeval.text import sentence_spans, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Bengali danda, Arabic question mark and full stop, Armenian full stop, Ethiopic
        ("আমি ভাত খাই। তুমি কী খাও?", ["আমি ভাত খাই।", "তুমি কী খাও?"]),
        ("هل أنت بخير؟ نعم۔ شكرا", ["هل أنت بخير؟", "نعم۔", "شكرا"]),
        ("Ես գնացի։ Դու մնացիր։", ["Ես գնացի։", "Դու մնացիր։"]),
        ("ቡና ጠጣሁ። ደህና ነህ፧", ["ቡና ጠጣሁ።", "ደህና ነህ፧"]),
        ("ကောင်းပါတယ်။ သွားမယ်။", ["ကောင်းပါတယ်။", "သွားမယ်။"]),  # Myanmar
        # a narrow terminator glued to the next word is no sentence end
        ("abc।def ghi", ["abc।def ghi"]),
        # CJK: no space needed; a point between digits of any script is a decimal point
        ("价格是３．５元。好的！", ["价格是３．５元。", "好的！"]),
        ("温度は１５．２度｡次です", ["温度は１５．２度｡", "次です"]),
        ("第２．章を読む", ["第２．", "章を読む"]),  # after a digit, not before one: a full stop
        # closing brackets of every CJK form stay with their sentence
        ("《好。》然后〔完。〕再见", ["《好。》", "然后〔完。〕", "再见"]),
        ("他说：“走吧！”大家笑了。", ["他说：“走吧！”", "大家笑了。"]),
    ],
)
def test_sentence_ends_of_other_scripts(text, expected):
    assert split_sentences(text) == expected


def test_offsets_are_exact_and_markdown_still_holds():
    text = "# शीर्षक\n\nपहला। दूसरा॥\n\n```\nकोड। नहीं\n```\n"
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["# शीर्षक", "पहला।", "दूसरा॥", "```\nकोड। नहीं\n```"]
    assert spans[1] == (10, 15)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Japanese: the quotative after the closing bracket continues the sentence
        ("「はい。」と言った。", ["「はい。」と言った。"]),
        (
            "「行こう！」って彼女が言った。次の日は雨だった。",
            ["「行こう！」って彼女が言った。", "次の日は雨だった。"],
        ),
        ("『本当？』、と聞いた。", ["『本当？』、と聞いた。"]),
        # ... an opening bracket or kanji after it starts the next sentence
        ("「はい。」「いいえ。」", ["「はい。」", "「いいえ。」"]),
        ("「終わり。」次の章。", ["「終わり。」", "次の章。"]),
        # Chinese: a dash or a comma-like mark continues; other text starts a sentence
        ("“走吧！”——他喊道。", ["“走吧！”——他喊道。"]),
        ("“好。”、“不好。”，都可以。", ["“好。”、“不好。”，都可以。"]),
        ("“好。”是回答。", ["“好。”", "是回答。"]),  # Han after the closer: not told apart
        ("“好。”“不好。”", ["“好。”", "“不好。”"]),  # an opening quote is no closer
        ("他说：“走吧！”大家笑了。", ["他说：“走吧！”", "大家笑了。"]),
        # closers by category, not a list: 〉 (Pe) and ⸥ (Pe) after a full stop
        ("〈终。〉然后⸤完。⸥再见", ["〈终。〉", "然后⸤完。⸥", "再见"]),
        # Devanagari: a closer after a danda stays with its sentence (Pf, Pe)
        ("उसने कहा “चलो।” फिर वह गया।", ["उसने कहा “चलो।”", "फिर वह गया।"]),
        ("(पहला।) दूसरा।", ["(पहला।)", "दूसरा।"]),
    ],
)
def test_closers_stay_with_their_sentence_and_a_quotation_continues(text, expected):
    assert split_sentences(text) == expected


def test_a_continued_quotation_keeps_exact_offsets():
    text = "前文。「はい。」と言った。後文。"
    assert sentence_spans(text) == [(0, 3), (3, 13), (13, 16)]
    assert text[3:13] == "「はい。」と言った。"


def test_the_rule_two_table_is_the_terminator_pattern_code_point_by_code_point():
    from chunkeval.text.sentences import _OTHER_TERMINATOR, _other_terminator_table

    table = _other_terminator_table()
    matched = [
        code
        for code in range(table.size)
        if not 0xD800 <= code <= 0xDFFF and _OTHER_TERMINATOR.match(chr(code))
    ]
    assert table.nonzero()[0].tolist() == matched
    assert table[ord("।")] and table[ord("。")] and table[ord("؟")]
    # ASCII terminators are rule 1's; commas and colons of other scripts end no sentence
    assert not table[ord(".")] and not table[ord("،")] and not table[ord("、")] and not table[ord("：")]


@pytest.mark.parametrize("wide", ["é", "𠀀"])  # below the table, and past it
def test_a_long_text_is_cut_at_another_scripts_terminator(wide):
    from chunkeval.text.lines import _Lines
    from chunkeval.text.sentences import _may_hold_other_terminators

    filler = f"Caf{wide} au lait is fine. " * 200
    assert len(filler) >= 4096  # long: its code points decide whether rule 2 scans it
    with_ends, without = filler + "ቡና ጠጣሁ። ደህና ነህ፧", filler + "ቡና ጠጣሁ ደህና ነህ"
    assert _may_hold_other_terminators(with_ends, _Lines(with_ends))
    # a code point past the table is scanned whole; below it, the table rules the scan out
    assert _may_hold_other_terminators(without, _Lines(without)) is (wide == "𠀀")
    assert split_sentences(with_ends)[-3:] == [f"Caf{wide} au lait is fine.", "ቡና ጠጣሁ።", "ደህና ነህ፧"]
    assert split_sentences(without)[-2:] == [f"Caf{wide} au lait is fine.", "ቡና ጠጣሁ ደህና ነህ"]
