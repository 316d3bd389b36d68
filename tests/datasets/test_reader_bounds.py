"""Every reader's work is bounded (issue 46): small hostile files made here -- a zip bomb, an
entity bomb, a Word document of too many paragraphs, a PDF whose pages share one large
content stream, HTML nested deep -- are each read within the bound or refused with one line
naming the file and the bound (exit 2), and a refused run leaves no results folder behind."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from _documents import run, write_docx
from _shared import needs
from chunkeval.cli import main
from chunkeval.datasets.readers import read_docx, read_html, read_pdf

ALWAYS = "<!doctype html><p>The harbour office opens at nine.</p>"


def _folder(tmp_path: Path, name: str, write) -> Path:
    """A files: folder holding one good page, the file ``name`` written by ``write``, questions."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.html").write_text(ALWAYS, encoding="utf-8")
    write(root / name)
    question = {"id": "q1", "text": "When?", "evidence": [{"doc_id": "good.html", "quote": "opens at nine"}]}
    (root / "questions.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    return root


def _refused(tmp_path: Path, root: Path, capsys, *words: str) -> None:
    """``chunkeval run`` on the folder exits 2 with one line holding ``words`` and no folder."""
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(
        ["run", "--dataset", f"files:{root}", "--chunker", "fixed(chunk_size=20, unit='chars')",
         "--k", "1", "--quiet", "--no-report", "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("chunkeval: error: "), err
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not out.exists()  # nothing that could pass for results


# ------------------------------------------------------------------------------------ Word
def _zip_bomb(path: Path) -> None:
    """A Word document whose body inflates to 260 MiB of spaces from about a megabyte."""
    write_docx(path, f"<w:p>{run('cover')}</w:p>")
    block = b" " * (1 << 20)
    with (
        zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("word/padding.xml", "w", force_zip64=True) as f,
    ):
        for _ in range(260):
            f.write(block)


@needs("docx", "docx")
def test_a_docx_zip_bomb_is_refused_by_its_headers(tmp_path, capsys):
    root = _folder(tmp_path, "bomb.docx", _zip_bomb)
    assert (root / "bomb.docx").stat().st_size < 2 * 1024 * 1024
    _refused(tmp_path, root, capsys, "bomb.docx", "its zip inflates to", "'word/padding.xml'", "256 MiB")


@needs("docx", "docx")
def test_a_docx_zip_bomb_under_the_size_bound_is_refused_by_its_ratio(tmp_path, capsys):
    """20 MiB of spaces deflate about a thousand times: no Word document does."""

    def bomb(path: Path) -> None:
        write_docx(path, f"<w:p>{run('cover')}</w:p>")
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("word/padding.xml", b" " * (20 << 20))

    _refused(tmp_path, _folder(tmp_path, "small-bomb.docx", bomb), capsys, "small-bomb.docx",
             "its zip entry 'word/padding.xml' inflates", "more than the 100 times", "(a zip bomb)")  # fmt: skip


@needs("docx", "docx")
def test_a_docx_of_too_many_entries_is_refused(tmp_path, capsys):
    def many(path: Path) -> None:
        write_docx(path, f"<w:p>{run('cover')}</w:p>")
        with zipfile.ZipFile(path, "a") as archive:
            for i in range(10_001):
                archive.writestr(f"junk/{i}", b"")

    _refused(tmp_path, _folder(tmp_path, "many.docx", many), capsys, "many.docx", "10,005 entries", "10,000")


@needs("docx", "docx")
def test_a_docx_entity_referring_to_another_is_expanded(tmp_path):
    doctype = (
        '<!DOCTYPE w:document [<!ENTITY a "tide"><!ENTITY b "&a; and &a;&#33;">'
        '<!ENTITY c "[&b;] &amp; &lt;more&gt;">]>'
    )
    body = "<w:p><w:r><w:t>Pools: &b; Notes: &c;</w:t></w:r></w:p>"
    text, metadata = read_docx(write_docx(tmp_path / "e.docx", body, doctype=doctype))
    assert text == "Pools: tide and tide! Notes: [tide and tide!] & <more>"
    assert "dropped" not in metadata


@needs("docx", "docx")
def test_a_docx_entity_expansion_is_bounded(tmp_path, capsys, monkeypatch):
    """Ten entities of ten references each: libxml2 lets it through, the reader's bound does not."""
    from chunkeval.datasets import docx_text

    monkeypatch.setattr(docx_text, "MAX_ENTITY_CHARS", 5_000)
    levels = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 5))
    body = "<w:p><w:r><w:t>&l4;</w:t></w:r></w:p>"  # 30,000 characters
    root = _folder(
        tmp_path, "laughs.docx", lambda p: write_docx(p, body, doctype=f"<!DOCTYPE w:document [{levels}]>")
    )
    _refused(tmp_path, root, capsys, "laughs.docx", "entity &l", "5,000 characters")


@needs("docx", "docx")
def test_a_docx_of_too_many_paragraphs_is_refused(tmp_path, capsys, monkeypatch):
    from chunkeval.datasets import docx_text

    monkeypatch.setattr(docx_text, "MAX_DOCX_PARAGRAPHS", 50)
    cells = "".join(f"<w:tc><w:p>{run(str(i))}</w:p></w:tc>" for i in range(30))
    body = f"<w:p>{run('cover')}</w:p><w:tbl><w:tr>{cells}</w:tr></w:tbl>"  # 1 + 30 cells + 30 paragraphs
    root = _folder(tmp_path, "long.docx", lambda p: write_docx(p, body))
    _refused(tmp_path, root, capsys, "long.docx", "more than 50 paragraphs and table cells")


# ------------------------------------------------------------------------------------ PDF
def write_shared_stream_pdf(path: Path, pages: int, repeat: int, shared_resources: bool = True) -> Path:
    """A PDF whose ``pages`` pages all show one content stream: ``repeat`` lines of text, deflated."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
             NameObject("/BaseFont"): NameObject("/Helvetica")}
        )
    )  # fmt: skip

    def resources():
        return writer._add_object(
            DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        )

    stream = StreamObject()
    stream.set_data(b"BT /F1 12 Tf 72 720 Td (tide pools close at dusk) Tj ET\n" * repeat)
    content = writer._add_object(stream.flate_encode())
    shared = resources()
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = content
        page[NameObject("/Resources")] = shared if shared_resources else resources()
    with open(path, "wb") as f:
        writer.write(f)
    return path


@needs("pypdf", "pdf")
def test_pages_sharing_one_stream_are_read_once(tmp_path, monkeypatch):
    from pypdf import PageObject

    calls = []
    extract = PageObject.extract_text
    monkeypatch.setattr(
        PageObject, "extract_text", lambda self, *a, **k: calls.append(1) or extract(self, *a, **k)
    )
    path = write_shared_stream_pdf(tmp_path / "shared.pdf", pages=40, repeat=3)
    text, metadata = read_pdf(path)
    page = text.split("\n\n")[0]
    assert page.count("tide pools close at dusk") == 3
    assert text == "\n\n".join([page] * 40)
    assert metadata["page_starts"][:3] == [0, len(page) + 2, 2 * (len(page) + 2)]
    assert len(calls) == 1  # one stream, one set of resources: extracted once


@needs("pypdf", "pdf")
def test_pages_times_content_past_the_bound_is_refused_before_any_extraction(tmp_path, capsys, monkeypatch):
    """The issue's small PDF whose pages share a stream inflating to megabytes: refused at once."""
    from pypdf import PageObject

    monkeypatch.setattr(PageObject, "extract_text", lambda *a, **k: pytest.fail("extracted"))
    # 400 pages x 1.1 MB = 440 MB of content from a file of a few kilobytes
    root = _folder(tmp_path, "shared.pdf", lambda p: write_shared_stream_pdf(p, 400, 20_000))
    assert (root / "shared.pdf").stat().st_size < 100_000
    _refused(
        tmp_path, root, capsys, "shared.pdf", "content streams inflate to more than 64 MiB", "page 60 of 400"
    )


@needs("pypdf", "pdf")
def test_pages_with_their_own_resources_count_each(tmp_path, capsys, monkeypatch):
    """The same stream under other resources may give other text: read per page, so counted per page."""
    from chunkeval.datasets import pdf_text

    monkeypatch.setattr(pdf_text, "MAX_PDF_CONTENT_BYTES", 1000)
    path = write_shared_stream_pdf(tmp_path / "own.pdf", pages=3, repeat=5, shared_resources=False)
    text, _ = read_pdf(path)  # 3 x 285 bytes: within the bound, each page read
    assert text.count("tide pools") == 15
    root = _folder(tmp_path, "many.pdf", lambda p: write_shared_stream_pdf(p, 4, 5, shared_resources=False))
    _refused(tmp_path, root, capsys, "many.pdf", "page 4 of 4")


@needs("pypdf", "pdf")
def test_too_many_pages_are_refused(tmp_path, capsys, monkeypatch):
    from chunkeval.datasets import pdf_text

    monkeypatch.setattr(pdf_text, "MAX_PDF_PAGES", 5)
    root = _folder(tmp_path, "long.pdf", lambda p: write_shared_stream_pdf(p, 6, 1))
    _refused(tmp_path, root, capsys, "long.pdf", "6 pages, more than the 5")


# ------------------------------------------------------------------------------------ HTML
@needs("bs4", "html")
@pytest.mark.parametrize("depth", [1_000, 20_000])
def test_deep_but_sane_html_is_read(tmp_path, depth):
    path = tmp_path / "deep.html"
    path.write_text(
        "<body>"
        + "<div><span>" * (depth // 2)
        + "deep <b>text</b>"
        + "</span></div>" * (depth // 2)
        + "<p>after</p>",
        encoding="utf-8",
    )
    text, _ = read_html(path)
    assert text == "deep text\n\nafter"


@needs("bs4", "html")
def test_html_nested_past_the_bound_is_refused(tmp_path, capsys, monkeypatch):
    from chunkeval.datasets import html_text

    monkeypatch.setattr(html_text, "MAX_HTML_DEPTH", 500)
    root = _folder(tmp_path, "deep.html", lambda p: p.write_text("<div>" * 600 + "x", encoding="utf-8"))
    _refused(tmp_path, root, capsys, "deep.html", "nest deeper than 500")


@needs("bs4", "html")
def test_html_larger_than_the_bound_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    from chunkeval.datasets import readers

    monkeypatch.setattr(readers, "MAX_DOCUMENT_BYTES", 100)
    root = _folder(tmp_path, "big.html", lambda p: p.write_text("<p>" + "x" * 200 + "</p>", encoding="utf-8"))
    _refused(
        tmp_path,
        root,
        capsys,
        "big.html",
        "207 bytes, more than the 100 bytes chunkeval reads of an HTML file",
    )
