"""PDF, Word and HTML documents in a ``files:`` folder (:mod:`chunkeval.datasets.readers`):
fixtures made here (matplotlib's PDF backend, python-docx, an HTML string), their text, page
starts, quotes resolving against them, and ``chunkeval run`` / ``validate`` on the folder."""

from __future__ import annotations

import json
import sys

import pytest

from chunkeval.cli import main
from chunkeval.datasets import load
from chunkeval.datasets.readers import page_of, read_html
from chunkeval.errors import MissingDependency

PAGES = (
    ["Tidepool safety rules.", "Visitors must leave the pools by dusk."],
    ["Shuttle timetable.", "The shuttle leaves the harbour at 9:40 every Sunday."],
)

HTML = """<!doctype html><html><head><title>Ignored title</title><style>p {color: red}</style></head>
<body><nav>Home</nav><h1>Volunteer   guide</h1>
<p>Volunteers sign in at the <b>front desk</b>
before every shift.</p><script>var hidden = "never text";</script>
<ul><li>Bring gloves.</li><li>Wear boots on the rocks.</li></ul>
<table><tr><td>Day</td><td>Lead</td></tr><tr><td>Monday</td><td>Noor</td></tr></table>
<p>Line one<br>line two</p></body></html>"""


def write_pdf(path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with plt.rc_context({"pdf.fonttype": 42}), PdfPages(path, metadata={"CreationDate": None}) as pdf:
        for lines in PAGES:
            fig = plt.figure(figsize=(6, 4))
            for i, line in enumerate(lines):
                fig.text(0.1, 0.9 - 0.1 * i, line)
            pdf.savefig(fig)
            plt.close(fig)


def write_docx(path):
    docx = pytest.importorskip("docx", reason="test extra (python-docx)")
    document = docx.Document()
    document.add_heading("Board minutes", level=1)
    document.add_paragraph("The board approved the new kiln budget of 4,200 pounds.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Item", "Owner"), ("Kiln", "Callum")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("Next meeting: 6 November.")
    document.save(path)


@pytest.fixture
def folder(tmp_path):
    pytest.importorskip("pypdf", reason="test extra (pypdf)")
    pytest.importorskip("bs4", reason="test extra (beautifulsoup4)")
    root = tmp_path / "docs"
    root.mkdir()
    write_pdf(root / "safety.pdf")
    write_docx(root / "minutes.docx")
    (root / "guide.html").write_text(HTML, encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nThe tide table is posted at the gate.\n", encoding="utf-8")
    questions = [
        ("q1", "When does the shuttle leave?", "safety.pdf", "leaves the harbour at 9:40 every Sunday"),
        ("q2", "What budget was approved?", "minutes.docx", "new kiln budget of 4,200 pounds"),
        ("q3", "Who leads on Monday?", "minutes.docx", "Kiln | Callum"),
        ("q4", "Where do volunteers sign in?", "guide.html", "sign in at the front desk before every shift"),
        ("q5", "Where is the tide table?", "notes.md", "posted at the gate"),
    ]
    with open(root / "questions.jsonl", "w", encoding="utf-8") as f:
        for qid, text, doc, quote in questions:
            f.write(
                json.dumps({"id": qid, "text": text, "evidence": [{"doc_id": doc, "quote": quote}]}) + "\n"
            )
    return root


def test_texts_page_starts_and_readers(folder):
    ds = load(f"files:{folder}")
    by_id = {d.id: d for d in ds.documents}
    assert sorted(by_id) == ["guide.html", "minutes.docx", "notes.md", "safety.pdf"]
    pdf = by_id["safety.pdf"]
    page_one = "Tidepool safety rules.\nVisitors must leave the pools by dusk."
    assert (
        pdf.text == page_one + "\n\nShuttle timetable.\nThe shuttle leaves the harbour at 9:40 every Sunday."
    )
    assert pdf.metadata["page_starts"] == [0, len(page_one) + 2]
    assert pdf.metadata["reader"].startswith("pypdf ")
    assert by_id["minutes.docx"].text == (
        "Board minutes\n\nThe board approved the new kiln budget of 4,200 pounds.\n\n"
        "Item | Owner\nKiln | Callum\n\nNext meeting: 6 November."
    )
    assert by_id["guide.html"].text == (
        "Home\n\nVolunteer guide\n\nVolunteers sign in at the front desk before every shift.\n\n"
        "Bring gloves.\nWear boots on the rocks.\n\nDay | Lead\nMonday | Noor\n\nLine one\nline two"
    )
    q1 = next(q for q in ds.questions if q.id == "q1")
    assert page_of(pdf.metadata, q1.evidence[0].start) == 2
    assert page_of(pdf.metadata, 0) == 1 and page_of(by_id["notes.md"].metadata, 0) is None
    assert ds.provenance["readers"] == sorted(
        {by_id[i].metadata["reader"] for i in ("safety.pdf", "minutes.docx", "guide.html")}
    )
    # deterministic: the same file gives the same text
    assert load(f"files:{folder}").fingerprint == ds.fingerprint


@pytest.mark.slow  # measured: a run and a report: ~3 s of CPU
def test_run_and_validate_on_a_folder_of_formats(folder, tmp_path, capsys):
    assert main(["validate", f"files:{folder}"]) == 0
    assert "is valid" in capsys.readouterr().out
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--dataset",
            f"files:{folder}",
            "--chunker",
            "sentence(max_chars=200)",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (info,) = manifest["datasets"].values()
    assert any(r.startswith("pypdf ") for r in info["provenance"]["readers"])
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "docs" in report
    assert main(["inspect", "--chunker", "sentence(max_chars=200)", str(folder / "safety.pdf")]) == 0
    shown = capsys.readouterr().out
    assert "  page 1\n" in shown and "9:40 every Sunday" in shown


def test_pdf_page_named_in_the_question_view(folder):
    from chunkeval.reports.html import _page_note

    ds = load(f"files:{folder}")
    pdf = ds.document("safety.pdf")
    assert _page_note(pdf.metadata, len(pdf.text) - 1) == ", page 2"
    assert _page_note({}, 3) == ""


def test_missing_library_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    (tmp_path / "a.html").write_text("<p>x</p>", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "bs4", None)  # import bs4 now raises ImportError
    with pytest.raises(MissingDependency, match=r"pip install 'chunkeval\[html\]'"):
        read_html(tmp_path / "a.html")


def test_damaged_pdf_is_a_listed_problem(tmp_path):
    pytest.importorskip("pypdf", reason="test extra (pypdf)")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "questions.jsonl").write_text("", encoding="utf-8")
    from chunkeval.datasets import DatasetError

    with pytest.raises(DatasetError) as err:
        load(f"files:{tmp_path}")
    assert any("broken.pdf: cannot be read as .pdf" in str(p) for p in err.value.problems)
