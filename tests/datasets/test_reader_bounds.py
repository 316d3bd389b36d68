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
@pytest.mark.parametrize(
    ("doctype", "body", "words"),
    [
        (  # a billion laughs: nine levels of ten references, past libxml2's amplification bound
            '<!DOCTYPE w:document [<!ENTITY a0 "lol">'
            + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
            + "]>",
            "<w:p><w:r><w:t>&a9;</w:t></w:r></w:p>",
            "an entity bomb",
        ),
        ("", "<w:p>" + "<w:sdt><w:sdtContent>" * 400 + "</w:sdtContent></w:sdt>" * 400 + "</w:p>",
         "nests more than 256 elements deep"),
    ],
    ids=["laughs", "deep"],
)  # fmt: skip
def test_a_docx_past_libxml2s_bounds_is_one_line_in_plain_words(tmp_path, capsys, doctype, body, words):
    root = _folder(tmp_path, "bomb.docx", lambda p: write_docx(p, body, doctype=doctype))
    _refused(tmp_path, root, capsys, "bomb.docx", words)


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
        tmp_path, root, capsys, "shared.pdf", "content streams inflate to more than 16 MiB", "page 15 of 400"
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


def write_form_pdf(path: Path, page: bytes, forms: dict[str, tuple[bytes, dict[str, str]]]) -> Path:
    """A one-page PDF written by hand: content ``page``, and form XObjects by name.

    ``forms`` maps each form's name to (its content, the names of the forms it may invoke ->
    their names); the page's resources name every form. Written byte by byte so that forms may
    invoke each other (a cycle) as no writer library would.
    """
    import zlib

    names = list(forms)
    number = {name: 10 + i for i, name in enumerate(names)}

    def stream(data: bytes, extra: bytes = b"") -> bytes:
        packed = zlib.compress(data)
        return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n%s\nendstream" % (
            len(packed),
            extra,
            packed,
        )

    def xobjects(which) -> bytes:
        return b"/XObject << " + b" ".join(b"/%s %d 0 R" % (n.encode(), number[t]) for n, t in which) + b" >>"

    font = b"/Font << /F1 3 0 R >>"
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << "
        + font
        + b" "
        + xobjects((n, n) for n in names)
        + b" >> >>",
        5: stream(page),
    }
    for name, (content, invokes) in forms.items():
        resources = b"/Resources << " + font + b" " + xobjects(invokes.items()) + b" >> "
        objects[number[name]] = stream(
            content, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources
        )
    out = bytearray(b"%PDF-1.7\n")
    offsets = {}
    for n in sorted(objects):
        offsets[n] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (n, objects[n])
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for n in range(1, size):
        out += b"%010d 00000 n \n" % offsets[n] if n in offsets else b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    path.write_bytes(bytes(out))
    return path


def _text(words: str, lines: int = 1) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td " + b"(%s) Tj T* " % words.encode() * lines + b"ET\n"


@needs("pypdf", "pdf")
def test_a_form_invoked_on_a_page_is_read_at_each_invocation(tmp_path):
    path = write_form_pdf(tmp_path / "form.pdf", b"/X Do\n/X Do\n", {"X": (_text("kelp at low tide"), {})})
    text, _ = read_pdf(path)
    assert text.count("kelp at low tide") == 2


@needs("pypdf", "pdf")
def test_a_form_invoked_thousands_of_times_is_refused_as_it_is_read(tmp_path, capsys, monkeypatch):
    """A 3 KB page of ``/X Do`` lines naming one 1 MB form kept pypdf busy for hours."""
    from chunkeval.datasets import pdf_text

    monkeypatch.setattr(pdf_text, "MAX_PDF_CONTENT_BYTES", 100_000)  # the form: 7,000 bytes
    calls = []
    real = pdf_text._stream_bytes
    monkeypatch.setattr(pdf_text, "_stream_bytes", lambda *a: calls.append(1) or real(*a))

    def bomb(path: Path) -> None:
        write_form_pdf(path, b"/X Do\n" * 5000, {"X": (_text("kelp at low tide", 200), {})})

    _refused(tmp_path, _folder(tmp_path, "invoked.pdf", bomb), capsys, "invoked.pdf", "page 1:",
             "form XObjects they invoke", "more than 100,000 bytes")  # fmt: skip
    assert len(calls) < 30  # refused at the 15th invocation, not after 5,000


@needs("pypdf", "pdf")
def test_forms_invoking_forms_are_counted_at_every_depth(tmp_path, capsys, monkeypatch):
    """Ten invocations of a form of ten invocations ... six deep: a million, from a few bytes."""
    from chunkeval.datasets import pdf_text

    monkeypatch.setattr(pdf_text, "MAX_PDF_CONTENT_BYTES", 100_000)

    def bomb(path: Path) -> None:
        forms = {f"F{i}": (b"/N Do\n" * 10 + _text("fan"), {"N": f"F{i + 1}"}) for i in range(5)}
        forms["F5"] = (_text("kelp at low tide", 100), {})
        write_form_pdf(path, b"/F0 Do\n", forms)

    _refused(tmp_path, _folder(tmp_path, "fan.pdf", bomb), capsys, "fan.pdf", "page 1:", "form XObjects")


@needs("pypdf", "pdf")
def test_forms_invoking_each_other_are_read_once_each(tmp_path):
    forms = {"X": (_text("north") + b"/Y Do\n", {"Y": "Y"}), "Y": (_text("south") + b"/X Do\n", {"X": "X"})}
    text, _ = read_pdf(write_form_pdf(tmp_path / "cycle.pdf", b"/X Do\n", forms))
    assert text.split() == ["north", "south"]  # pypdf cuts the cycle


@needs("pypdf", "pdf")
def test_one_page_past_the_page_bound_is_refused_before_any_extraction(tmp_path, capsys, monkeypatch):
    """pypdf's time grows with the square of a page's text: one page's content is bounded."""
    from pypdf import PageObject

    from chunkeval.datasets import pdf_text

    monkeypatch.setattr(pdf_text, "MAX_PDF_PAGE_BYTES", 1000)
    monkeypatch.setattr(PageObject, "extract_text", lambda *a, **k: pytest.fail("extracted"))
    root = _folder(tmp_path, "dense.pdf", lambda p: write_form_pdf(p, _text("kelp", 100), {}))
    _refused(tmp_path, root, capsys, "dense.pdf", "page 1: its content streams", "more than 1,000 bytes")


@needs("pypdf", "pdf")
def test_a_repaired_cross_reference_table_is_read_without_pypdf_warnings(tmp_path, capsys):
    path = write_form_pdf(tmp_path / "broken.pdf", _text("kelp at low tide"), {})
    data = path.read_bytes()
    path.write_bytes(data.replace(b"startxref\n", b"startxref\n9").replace(b"xref\n0", b"xrf\n0"))
    capsys.readouterr()
    text, _ = read_pdf(path)
    assert text == "kelp at low tide"
    assert capsys.readouterr().err == ""


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
def test_html_of_too_many_elements_is_refused_before_its_tree_is_built(tmp_path, capsys, monkeypatch):
    """A million unclosed ``<p><b><i>`` (10 MB) made a tree of 2.4 GB before any bound was seen."""
    import bs4

    from chunkeval.datasets import html_text

    monkeypatch.setattr(html_text, "MAX_HTML_ELEMENTS", 300)
    real = bs4.BeautifulSoup
    monkeypatch.setattr(
        bs4, "BeautifulSoup", lambda m, *a: real(m, *a) if "<i>x<p>" not in m else pytest.fail("parsed")
    )
    root = _folder(tmp_path, "unclosed.html", lambda p: p.write_text("<p><b><i>x" * 101, encoding="utf-8"))
    _refused(tmp_path, root, capsys, "unclosed.html", "303 start tags, more than the 300 elements")


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
