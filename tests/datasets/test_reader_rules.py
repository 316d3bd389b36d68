"""The readers keep every visible character and name what they leave out: Word content
controls, revisions, fields, text boxes, notes and entities; what a browser shows of HTML, its
encoding and control characters; PDF page starts around a blank page; empty files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _documents import run, write_docx
from _shared import needs
from chunkeval.cli import main
from chunkeval.datasets import DatasetError, load
from chunkeval.datasets.readers import page_of, read_docx, read_html, read_pdf

ONE_SHOT = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# ------------------------------------------------------------------------------------ Word

BODY = (
    f"<w:p>{run('Service agreement')}</w:p>"
    # a block-level content control around a paragraph
    f'<w:sdt><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent><w:p>{run("Client: Orla Brennan")}'
    "</w:p></w:sdtContent></w:sdt>"
    # a run-level content control, a deletion and an insertion in one paragraph
    f"<w:p>{run('Contract ')}<w:sdt><w:sdtPr/><w:sdtContent>{run('KX-4471')}</w:sdtContent></w:sdt>"
    f'{run(" runs ")}<w:del w:id="1" w:author="E"><w:r><w:delText>two</w:delText></w:r></w:del>'
    f'<w:ins w:id="2" w:author="E">{run("three")}</w:ins>{run(" years.")}</w:p>'
    # a complex field (instruction hidden, result shown), a simple field, a comment
    f'<w:p>{run("Total: ")}<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
    '<w:r><w:instrText xml:space="preserve"> =SUM(ABOVE) </w:instrText></w:r>'
    f'<w:r><w:fldChar w:fldCharType="separate"/></w:r>{run("42")}<w:r><w:fldChar w:fldCharType="end"/></w:r>'
    f'{run(" units on page ")}<w:fldSimple w:instr=" PAGE ">{run("7")}</w:fldSimple>{run(".")}'
    '<w:r><w:commentReference w:id="0"/></w:r></w:p>'
    # a footnote reference
    f'<w:p>{run("See the note")}<w:r><w:footnoteReference w:id="1"/></w:r>{run(".")}</w:p>'
    # a table whose second row is in a content control, with a cell in another
    f"<w:tbl><w:tr><w:tc><w:p>{run('Item')}</w:p></w:tc><w:tc><w:p>{run('Owner')}</w:p></w:tc></w:tr>"
    f"<w:sdt><w:sdtContent><w:tr><w:tc><w:p>{run('Kiln')}</w:p></w:tc>"
    f"<w:sdt><w:sdtContent><w:tc><w:p>{run('Callum')}</w:p></w:tc></w:sdtContent></w:sdt>"
    "</w:tr></w:sdtContent></w:sdt></w:tbl>"
    # a text box written twice, as DrawingML and as its VML fallback: read once
    f"<w:p>{run('Figure 1')}<w:r><mc:AlternateContent>"
    '<mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx>'
    f"<w:txbxContent><w:p>{run('Boxed remark')}</w:p></w:txbxContent>"
    "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
    "<mc:Fallback><w:pict><v:shape><v:textbox>"
    f"<w:txbxContent><w:p>{run('Boxed remark')}</w:p></w:txbxContent>"
    "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"
    # tabs, breaks, a non-breaking hyphen and a soft hyphen inside runs
    "<w:p><w:r><w:t>Step</w:t><w:tab/><w:t>one</w:t><w:br/><w:t>e</w:t><w:noBreakHyphen/><w:t>mail</w:t>"
    "<w:softHyphen/><w:t>s</w:t></w:r></w:p>"
)
FOOTNOTES = f'<w:footnote w:id="1"><w:p>{run("Payment is due in 30 days.")}</w:p></w:footnote>'


@needs("docx", "docx")
def test_docx_keeps_every_visible_part_in_reading_order(tmp_path):
    text, metadata = read_docx(write_docx(tmp_path / "a.docx", BODY, FOOTNOTES))
    assert text == (
        "Service agreement\n\n"
        "Client: Orla Brennan\n\n"
        "Contract KX-4471 runs three years.\n\n"
        "Total: 42 units on page 7.\n\n"
        "See the note.\n\n"
        "Payment is due in 30 days.\n\n"
        "Item | Owner\nKiln | Callum\n\n"
        "Figure 1\n\n"
        "Boxed remark\n\n"
        "Step\tone\ne\u2011mail\u00ads"
    )
    assert metadata["dropped"] == {
        "comment (w:comment, not body text)": 1,
        "deleted text (tracked revision w:del)": 1,
    }


@needs("docx", "docx")
def test_docx_revisions_are_accepted_moves_included(tmp_path):
    body = (
        f"<w:p>{run('Keep ')}<w:moveFrom w:id='3' w:author='E'><w:r><w:t>moved </w:t></w:r></w:moveFrom>"
        f"{run('this')}<w:moveTo w:id='4' w:author='E'>{run(' moved')}</w:moveTo>"
        "<w:del w:id='5' w:author='E'><w:r><w:delText> gone</w:delText></w:r></w:del>"
        "<w:del w:id='6' w:author='E'><w:r><w:delText> too</w:delText></w:r></w:del>"
        f"<w:ins w:id='7' w:author='E'>{run('.')}</w:ins></w:p>"
        # a paragraph whose runs were all deleted leaves no block
        "<w:p><w:del w:id='8' w:author='E'><w:r><w:delText>Struck paragraph.</w:delText></w:r></w:del></w:p>"
        f"<w:p>{run('End.')}</w:p>"
    )
    text, metadata = read_docx(write_docx(tmp_path / "r.docx", body))
    assert text == "Keep this moved.\n\nEnd."
    assert metadata["dropped"] == {
        "deleted text (tracked revision w:del)": 3,
        "moved-from text (tracked revision w:moveFrom)": 1,
    }


@needs("docx", "docx")
def test_docx_equation_text_and_a_field_spanning_paragraphs(tmp_path):
    body = (
        f"<w:p>{run('Area is ')}<m:oMath><m:r><m:t>A=</m:t></m:r><m:r><m:t>\u03c0r</m:t></m:r></m:oMath>"
        f"{run('.')}</w:p>"
        # a table-of-contents field: its code in the first paragraph, its result in the next two
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>TOC \\o "1-3"</w:instrText></w:r>'
        f'<w:r><w:fldChar w:fldCharType="separate"/></w:r>{run("Contents")}</w:p>'
        f'<w:p>{run("1 Safety")}<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
    )
    text, metadata = read_docx(write_docx(tmp_path / "m.docx", body))
    assert text == "Area is A=\u03c0r.\n\nContents\n\n1 Safety"
    assert "dropped" not in metadata


@needs("docx", "docx")
def test_docx_hidden_text_and_headers_are_named_not_read(tmp_path):
    import docx

    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "Confidential draft"
    paragraph = document.add_paragraph("Visible ")
    paragraph.add_run("secret").font.hidden = True
    paragraph.add_run("end.")
    document.add_paragraph("Shown again.").runs[0].font.hidden = False
    document.save(tmp_path / "h.docx")
    text, metadata = read_docx(tmp_path / "h.docx")
    assert text == "Visible end.\n\nShown again."
    assert metadata["dropped"] == {
        "header (page furniture, not body text)": 1,
        "hidden text (run formatted w:vanish)": 1,
    }


@needs("docx", "docx")
def test_docx_external_entity_is_never_resolved_and_is_named(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET", encoding="utf-8")
    doctype = f'<!DOCTYPE w:document [<!ENTITY ext SYSTEM "{secret.as_uri()}"><!ENTITY org "Harbour Trust">]>'
    body = "<w:p><w:r><w:t>Signed by &org; for &ext; today.</w:t></w:r></w:p>"
    text, metadata = read_docx(write_docx(tmp_path / "e.docx", body, doctype=doctype))
    assert text == "Signed by Harbour Trust for  today."
    assert "TOPSECRET" not in text
    assert metadata["dropped"] == {"entity &ext; (external or undeclared, never resolved)": 1}


# ------------------------------------------------------------------------------------ HTML

PAGE = (
    '<!doctype html><html><head><meta charset="iso-8859-7"><title>Not text</title>'
    "<style>p {color: red}</style></head><body>\n"
    "<h1>\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1   harbour</h1>\n"
    "<div hidden>Internal draft note.</div>\n"
    '<p style="color: red; DISPLAY : None !important">Tracking pixel text.</p>\n'
    '<p style="visibility:hidden">Invisible <span style="visibility: visible">shown again</span></p>\n'
    "<pre>\ndef greet(name):\n    return  'hi '  +\tname\n\n# done\n</pre>\n"
    "<p>Bad byte: @ end.</p>\n"
    "<p>Bell\x07 and  \x1b  escape.</p>\n"
    "<script>var never = 'text';</script><template><p>Never shown.</p></template>\n"
    "</body></html>"
)


def page_bytes() -> bytes:
    # ISO-8859-7 text, with byte 0xFF (undefined in ISO-8859-7) where the "@" stands
    return PAGE.encode("iso-8859-7").replace(b"@", b"\xff")


@needs("bs4", "html")
def test_html_page_hidden_pre_declared_charset_bad_byte_and_controls(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(page_bytes())
    text, metadata = read_html(path)
    assert text == (
        "\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 harbour\n\n"
        "shown again\n\n"
        "def greet(name):\n    return  'hi '  +\tname\n\n# done\n\n"
        "Bad byte: \ufffd end.\n\n"
        "Bell and escape."
    )
    offset = page_bytes().index(b"\xff")
    assert metadata["encoding"] == "iso8859-7"
    assert metadata["dropped"] == {
        "C0 control character (never displayed)": 2,
        "hidden element (display: none)": 1,
        "hidden element (hidden attribute)": 1,
        "hidden element (visibility: hidden)": 1,
        f"invalid iso8859-7 byte(s) replaced by U+FFFD (first at byte {offset})": 1,
    }


@needs("bs4", "html")
def test_html_encoding_order_bom_then_meta_then_utf8(tmp_path):
    path = tmp_path / "p.html"
    # a UTF-8 page with one bad byte: UTF-8 throughout, the byte named (never Windows-1252)
    path.write_bytes(b"<p>Caf\xc3\xa9 one \xe9 two</p>")
    text, metadata = read_html(path)
    assert text == "Caf\u00e9 one \ufffd two"
    assert metadata["dropped"] == {"invalid utf-8 byte(s) replaced by U+FFFD (first at byte 13)": 1}
    # a byte-order mark wins over a meta charset
    path.write_bytes(b"\xff\xfe" + '<meta charset="iso-8859-1"><p>Caf\u00e9</p>'.encode("utf-16-le"))
    assert read_html(path)[0] == "Caf\u00e9"
    # iso-8859-1 is read as browsers read it: Windows-1252 (0x80 is the euro sign)
    path.write_bytes(b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>5 \x80</p>')
    assert read_html(path) == ("5 \u20ac", {"reader": read_html(path)[1]["reader"], "encoding": "cp1252"})
    # NUL bytes and other controls in a page without a declaration: UTF-8, never a UTF-16 guess
    path.write_bytes(b"<p>A\x00B\x01C plain</p>")
    text, metadata = read_html(path)
    assert text == "ABC plain"
    assert metadata["dropped"] == {"C0 control character (never displayed)": 2}
    # an unknown label is named, and the page read as UTF-8
    path.write_bytes(b'<meta charset="klingon"><p>ok \xc3\xa9</p>')
    text, metadata = read_html(path)
    assert text == "ok \u00e9"
    assert metadata["dropped"] == {"unknown charset label 'klingon' (read as UTF-8)": 1}


CONTROLS = [chr(c) for c in [*range(0x09), 0x0B, *range(0x0E, 0x20), 0x7F]]


@needs("bs4", "html")
@ONE_SHOT
@given(st.lists(st.tuples(st.integers(0, 40), st.sampled_from(CONTROLS)), min_size=1, max_size=6))
def test_any_c0_control_is_removed_and_counted(tmp_path_factory, inserts):
    words = "Tide tables are posted at the harbour office daily."
    marked = words
    for where, char in sorted(inserts, reverse=True):
        pos = where % (len(marked) + 1)
        marked = marked[:pos] + char + marked[pos:]
    path = tmp_path_factory.mktemp("c0") / "c.html"
    path.write_bytes(f"<p>{marked}</p>".encode())
    text, metadata = read_html(path)
    assert text == words
    assert metadata["dropped"] == {"C0 control character (never displayed)": len(inserts)}


PRE_CHARS = st.text(st.sampled_from(list("ab <>&\"'\t\n  x=1;{}")), max_size=60)


@needs("bs4", "html")
@ONE_SHOT
@given(
    PRE_CHARS,
    st.sampled_from(["pre", "textarea", "div style='white-space: pre'", "p style='white-space:pre-wrap'"]),
)
def test_preformatted_text_is_kept_character_for_character(tmp_path_factory, code, opening):
    from html import escape

    tag = opening.split()[0]
    path = tmp_path_factory.mktemp("pre") / "p.html"
    path.write_text(f"<p>Before.</p><{opening}>X{escape(code)}</{tag}><p>After.</p>", encoding="utf-8")
    text, _ = read_html(path)
    kept = "X" + code
    between = "\n" * max(0, 2 - (len(kept) - len(kept.rstrip("\n"))))
    assert text == f"Before.\n\n{kept}{between}After."


@needs("bs4", "html")
@ONE_SHOT
@given(st.lists(st.tuples(st.sampled_from(["", "hidden", "style='display:none'", "style='visibility:hidden'"]),
                          st.sampled_from(["Alpha one", "Beta two", "Gamma three"])), min_size=1, max_size=8))  # fmt: skip
def test_hidden_elements_are_left_out_and_counted(tmp_path_factory, paragraphs):
    path = tmp_path_factory.mktemp("hide") / "h.html"
    path.write_text("".join(f"<p {how}>{words}</p>" for how, words in paragraphs), encoding="utf-8")
    text, metadata = read_html(path)
    assert text == "\n\n".join(words for how, words in paragraphs if not how)
    assert sum(metadata.get("dropped", {}).values()) == sum(1 for how, _ in paragraphs if how)


# ------------------------------------------------------------------------------------ PDF


def write_pdf(path: Path, pages: list[str | None]) -> Path:
    """A PDF with one page per entry: a line of Helvetica text, or a blank page for None."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for line in pages:
        page = writer.add_blank_page(612, 792)
        if line is not None:
            stream = DecodedStreamObject()
            stream.set_data(f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode("latin-1"))
            page[NameObject("/Contents")] = writer._add_object(stream)
            fonts = DictionaryObject({NameObject("/F1"): font})
            page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    with path.open("wb") as handle:
        writer.write(handle)
    return path


@needs("pypdf", "pdf")
def test_pdf_blank_middle_page_starts_where_the_next_page_with_text_does(tmp_path):
    pages = ["First page text.", None, "Third page text.", None]
    text, metadata = read_pdf(write_pdf(tmp_path / "b.pdf", pages))
    assert text == "First page text.\n\nThird page text."
    assert metadata["page_starts"] == [0, 18, 18, 34]
    holders = [page_of(metadata, i) for i in range(len(text))]
    assert holders == [1] * 18 + [3] * 16  # no character is credited to a blank page


# ------------------------------------------------------------------------------------ files:


@needs("docx", "docx")
def test_files_loader_names_drops_and_empty_files(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_docx(folder / "minutes.docx", BODY, FOOTNOTES)
    (folder / "notes.md").write_text("The kiln budget is 4,200 pounds.", encoding="utf-8")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    (folder / "blank.md").write_text(" \n\t\n", encoding="utf-8")
    questions = [
        {"id": "q1", "text": "Who is the client?", "evidence": [{"quote": "Client: Orla Brennan"}]},
        {"id": "q2", "text": "What is the budget?", "evidence": [{"quote": "4,200 pounds"}]},
    ]
    (folder / "questions.jsonl").write_text("\n".join(map(json.dumps, questions)) + "\n", encoding="utf-8")
    dataset = load(f"files:{folder}")
    assert [d.id for d in dataset.documents] == ["minutes.docx", "notes.md"]
    assert dataset.provenance["empty_files"] == ["blank.md", "empty.txt"]
    assert dataset.provenance["dropped"] == {
        "minutes.docx": {"comment (w:comment, not body text)": 1, "deleted text (tracked revision w:del)": 1}
    }
    assert main(["validate", f"files:{folder}"]) == 0
    out = capsys.readouterr().out
    assert "empty files skipped (no text to chunk or quote): 2: blank.md, empty.txt" in out
    assert (
        "    minutes.docx: left out: 1 x comment (w:comment, not body text); "
        "1 x deleted text (tracked revision w:del)" in out
    )
    assert out.count("minutes.docx") == 1  # named once per file
    assert main(["inspect", "--chunker", "paragraph(max_words=50)", str(folder / "minutes.docx")]) == 0
    out = capsys.readouterr().out
    assert out.count("left out: 1 x comment") == 1


def test_a_folder_of_empty_files_is_an_error(tmp_path):
    (tmp_path / "a.txt").write_text("", encoding="utf-8")
    (tmp_path / "b.md").write_text("\n\n", encoding="utf-8")
    with pytest.raises(
        DatasetError, match=r"every matching file is empty or whitespace only \(2: a.txt, b.md\)"
    ):
        load(f"files:{tmp_path}")


def test_an_empty_document_of_a_jsonl_dataset_is_a_problem(tmp_path):
    docs = tmp_path / "documents.jsonl"
    docs.write_text(
        json.dumps({"id": "d1", "text": "Nets dry slowly."})
        + "\n"
        + json.dumps({"id": "d2", "text": "  "})
        + "\n",
        encoding="utf-8",
    )
    qs = tmp_path / "questions.jsonl"
    qs.write_text(json.dumps({"id": "q", "text": "How?", "evidence": [{"quote": "dry slowly"}]}) + "\n")
    with pytest.raises(DatasetError) as info:
        load(f"jsonl:{tmp_path}")
    assert any("text is empty or whitespace only" in str(p) and "d2" in str(p) for p in info.value.problems)
