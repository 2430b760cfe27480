"""DHG-Bench section 4.3's statements about robustness, checked against robustness points (the claim table).

Each :class:`Claim` quotes the paper's sentence, says which dataset it is about ("all datasets" statements are checked
on the datasets measured here), and computes our measurement and a verdict from the mean test accuracies of the
robustness cells: ``holds``, ``does not hold``, or ``not measurable`` (a cell it needs was not trained, or the
statement is about a dataset that was not run). Rules, fixed before reading the numbers:

* a model's *drop* at ratio ``r`` is ``acc(0) - acc(r)`` in accuracy points; its *relative drop* is the drop over
  ``acc(0)`` (the paper's "degrade by less than 7%" is read as relative, the absolute count is printed beside it);
* "most" / "generally" / "typically" / "in most cases": more than half of the models measured; "all models": every
  one; the count is always printed, so another reading can be applied to the same row;
* shapes are read from three ratios every model has (the grid's cut, see the table of what was run): a decline
  *decelerates* ("sharp at the beginning, then stabilizes") when its drop per unit ratio over the first interval is
  larger than over the second, and *accelerates* when it is smaller; "approximately linear" is R² >= 0.9 of a
  least-squares line through all the label-noise ratios measured (0 included);
* spectral-based, spatial-based, tensor-based: the paper's categories (section 3.2, :data:`CATEGORY`).

Ratio 0 is the clean run, the same for every kind (every perturbation at ratio 0 is the identity: HGNN's six ratio-0
cells are equal seed for seed), so a kind without its own ratio-0 cell uses the model's clean cell of another kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

#: DHG-Bench section 3.2's three categories (the paper's "UniGNN" is UniGCNII; MLP, CEGCN, CEGAT are baselines).
CATEGORY = {
    **{m: "spectral" for m in ("HGNN", "HyperGCN", "HCHA", "LEGCN", "HyperND", "PhenomNN", "SheafHyperGNN", "HJRL",
                               "DPHGNN", "TF-HNN")},
    **{m: "spatial" for m in ("HNHN", "UniGCNII", "AllSetTransformer", "ED-HNN", "HyperGT")},
    **{m: "tensor" for m in ("EHNN", "T-HyperGNN")},
}
#: The four spectral-based methods section 4.3.1 names as declining under added hyperlinks (on Pubmed).
NAMED_SPECTRAL = ("HGNN", "PhenomNN", "DPHGNN", "TF-HNN")
HOLDS, FAILS, NOT_MEASURABLE = "holds", "does not hold", "not measurable"

Acc = dict[str, dict[str, dict[float, float]]]  # kind -> model -> ratio -> mean test accuracy


@dataclass(frozen=True)
class Claim:
    section: str
    about: str  # "Cora", "all datasets", or another dataset (then not measurable here)
    quote: str
    check: Optional[Callable[[Acc], tuple[str, str]]]  # acc of one dataset -> (measurement, verdict)


def _models(acc: Acc, *needs: tuple[str, float]) -> list[str]:
    """Models with a cell at every (kind, ratio) of ``needs`` (ratio 0 included in each kind by the caller)."""
    sets = [{m for m, r in acc.get(k, {}).items() if ratio in r} for k, ratio in needs]
    return sorted(set.intersection(*sets)) if sets else []


def _drop(acc: Acc, kind: str, model: str, ratio: float) -> float:
    return acc[kind][model][0.0] - acc[kind][model][ratio]


def _most(n: int, total: int) -> str:
    return HOLDS if total and n * 2 > total else FAILS


def _count(n: int, total: int) -> str:
    return f"{n} of {total}"


def _removal_7pct(acc: Acc) -> tuple[str, str]:
    models = _models(acc, ("remove_incidence", 0.0), ("remove_incidence", 0.9))
    if len(models) < 2:
        return "remove_incidence at 0.9 not measured", NOT_MEASURABLE
    rel = {m: _drop(acc, "remove_incidence", m, 0.9) / acc["remove_incidence"][m][0.0] for m in models}
    absolute = sum(_drop(acc, "remove_incidence", m, 0.9) < 7 for m in models)
    n = sum(r < 0.07 for r in rel.values())
    losers = ", ".join(f"{m} {100 * rel[m]:.1f}%" for m in models if rel[m] >= 0.07) or "none"
    text = (f"{_count(n, len(models))} lose less than 7% (relative) at 90% removal; {absolute} less than 7 points; "
            f"7% or more: {losers}")
    return text, HOLDS if n >= math.ceil(0.7 * len(models)) else FAILS


def _structure_most(acc: Acc) -> tuple[str, str]:
    parts, ok, total = [], 0, 0
    for kind in ("remove_incidence", "add_incidence"):
        models = _models(acc, (kind, 0.0), (kind, 0.9))
        n = sum(_drop(acc, kind, m, 0.9) / acc[kind][m][0.0] < 0.07 for m in models)
        parts.append(f"{kind} 0.9: {_count(n, len(models))} lose less than 7%")
        ok, total = ok + n, total + len(models)
    if not total:
        return "structure perturbations at 0.9 not measured", NOT_MEASURABLE
    return "; ".join(parts), _most(ok, total)


def _spectral_vs_rest(acc: Acc) -> tuple[str, str]:
    parts, verdicts = [], []
    for kind in ("remove_incidence", "add_incidence"):
        models = _models(acc, (kind, 0.0), (kind, 0.9))
        spec = [_drop(acc, kind, m, 0.9) for m in models if CATEGORY.get(m) == "spectral"]
        rest = [_drop(acc, kind, m, 0.9) for m in models if CATEGORY.get(m) in ("spatial", "tensor")]
        if not spec or not rest:
            continue
        parts.append(f"{kind} 0.9: mean drop spectral {np.mean(spec):.2f} ({len(spec)} models), spatial and tensor "
                     f"{np.mean(rest):.2f} ({len(rest)})")
        verdicts.append(np.mean(spec) > np.mean(rest))
    if not verdicts:
        return "needs spectral and non-spectral models at 0.9", NOT_MEASURABLE
    return "; ".join(parts), HOLDS if all(verdicts) else FAILS


def _named_spectral_addition(acc: Acc) -> tuple[str, str]:
    models = _models(acc, ("add_incidence", 0.0), ("add_incidence", 0.9))
    named = [m for m in models if m in NAMED_SPECTRAL]
    others = [m for m in models if m not in NAMED_SPECTRAL]
    if not named or not others:
        return "needs the four named methods and others at add_incidence 0.9", NOT_MEASURABLE
    d = {m: _drop(acc, "add_incidence", m, 0.9) for m in models}
    stable = sum(d[m] < 2 for m in others)
    text = (f"at 0.9: drops of the named ({', '.join(f'{m} {d[m]:.2f}' for m in named)}), mean "
            f"{np.mean([d[m] for m in named]):.2f}; the other {len(others)} mean {np.mean([d[m] for m in others]):.2f}, "
            f"{stable} of them within 2 points")
    return text, HOLDS if min(d[m] for m in named) > max(d[m] for m in others) else FAILS


def _phenomnn_addition(acc: Acc) -> tuple[str, str]:
    if "PhenomNN" not in _models(acc, ("add_incidence", 0.0), ("add_incidence", 0.9)):
        return "PhenomNN at add_incidence 0.9 not measured", NOT_MEASURABLE
    a = acc["add_incidence"]["PhenomNN"]
    rel = (a[0.0] - a[0.9]) / a[0.0]
    others = [m for m in _models(acc, ("add_incidence", 0.0), ("add_incidence", 0.9)) if m != "PhenomNN"]
    rank = 1 + sum(_drop(acc, "add_incidence", m, 0.9) < a[0.0] - a[0.9] for m in others)
    return (f"PhenomNN {a[0.0]:.2f} -> {a[0.9]:.2f} at 0.9 ({100 * rel:.1f}% relative; rank {rank} of "
            f"{len(others) + 1} by drop, 1 = smallest)"), HOLDS if rel < 0.07 else FAILS


def _equal_levels(acc: Acc, worse: tuple[str, ...], better: tuple[str, ...]) -> tuple[list[str], int, int, list[float]]:
    ratios = sorted({r for k in worse + better for m in acc.get(k, {}).values() for r in m if r > 0})
    n = total = 0
    used = []
    for r in ratios:
        models = _models(acc, *[(k, r) for k in worse + better], *[(k, 0.0) for k in worse + better])
        for m in models:
            w = np.mean([acc[k][m][r] for k in worse])
            b = np.mean([acc[k][m][r] for k in better])
            n += w < b
            total += 1
        if models:
            used.append(r)
    return [f"{r:g}" for r in used], n, total, used


def _feature_vs_structure(acc: Acc) -> tuple[str, str]:
    ratios, n, total, _ = _equal_levels(acc, ("feature_noise", "feature_mask"), ("remove_incidence", "add_incidence"))
    if not total:
        return "no ratio with all four feature and structure kinds", NOT_MEASURABLE
    return (f"mean accuracy of the two feature kinds below that of the two structure kinds in "
            f"{_count(n, total)} (model, ratio) pairs, ratios {', '.join(ratios)}"), _most(n, total)


def _noise_vs_mask(acc: Acc) -> tuple[str, str]:
    ratios, n, total, _ = _equal_levels(acc, ("feature_noise",), ("feature_mask",))
    if not total:
        return "no common ratio of feature noise and masking", NOT_MEASURABLE
    return (f"accuracy under noise below accuracy under masking in {_count(n, total)} (model, ratio) pairs, ratios "
            f"{', '.join(ratios)}"), _most(n, total)


def _shape(acc: Acc, kind: str, points: tuple[float, float, float], want: str) -> tuple[str, str]:
    a, b, c = points
    models = _models(acc, *[(kind, r) for r in points])
    if not models:
        return f"{kind} at {a:g}, {b:g}, {c:g} not measured", NOT_MEASURABLE
    n = 0
    for m in models:
        y = acc[kind][m]
        first, second = (y[a] - y[b]) / (b - a), (y[b] - y[c]) / (c - b)
        n += first > second if want == "decelerates" else first < second
    return (f"{kind}: drop per unit ratio over {a:g}-{b:g} vs {b:g}-{c:g}: the decline {want} for "
            f"{_count(n, len(models))} models"), _most(n, len(models))


def _noise_sharp_then_stable(acc: Acc) -> tuple[str, str]:
    return _shape(acc, "feature_noise", (0.0, 0.3, 0.9), "decelerates")


def _mask_accelerates(acc: Acc) -> tuple[str, str]:
    return _shape(acc, "feature_mask", (0.0, 0.3, 0.9), "accelerates")


def _sparsity_accelerates(acc: Acc) -> tuple[str, str]:
    return _shape(acc, "label_sparsity", (0.0, 0.4, 0.8), "accelerates")


def _supervision_all_decline(acc: Acc) -> tuple[str, str]:
    parts, verdicts = [], []
    for kind, r in (("label_noise", 0.2), ("label_sparsity", 0.8)):
        models = _models(acc, (kind, 0.0), (kind, r))
        if not models:
            continue
        n = sum(_drop(acc, kind, m, r) > 1 for m in models)
        parts.append(f"{kind} {r:g}: {_count(n, len(models))} lose more than 1 point")
        verdicts.append(n == len(models))
    if not verdicts:
        return "label noise and sparsity not measured", NOT_MEASURABLE
    return "; ".join(parts), HOLDS if all(verdicts) else FAILS


def _label_noise_vs_sparsity(acc: Acc) -> tuple[str, str]:
    models = _models(acc, ("label_noise", 0.0), ("label_noise", 0.2), ("label_sparsity", 0.8))
    if not models:
        return "label noise 0.2 and sparsity 0.8 not measured", NOT_MEASURABLE
    n = sum(_drop(acc, "label_noise", m, 0.2) > _drop(acc, "label_sparsity", m, 0.8) for m in models)
    text = f"drop at the largest label noise (0.2) above the drop at the largest sparsity (0.8) for {_count(n, len(models))}"
    eq = _models(acc, ("label_noise", 0.0), ("label_noise", 0.2), ("label_sparsity", 0.2))
    if eq:
        k = sum(_drop(acc, "label_noise", m, 0.2) > _drop(acc, "label_sparsity", m, 0.2) for m in eq)
        text += f"; at the equal ratio 0.2 for {_count(k, len(eq))}"
    return text, _most(n, len(models))


def _label_noise_linear(acc: Acc) -> tuple[str, str]:
    fits = {}
    for m, y in acc.get("label_noise", {}).items():
        if len(y) >= 3:
            xs = np.array(sorted(y))
            ys = np.array([y[r] for r in xs])
            ss = float(((ys - ys.mean()) ** 2).sum())
            fit = np.polyval(np.polyfit(xs, ys, 1), xs)
            fits[m] = 1 - float(((ys - fit) ** 2).sum()) / ss if ss > 0 else math.nan
    if not fits:
        return "fewer than three label-noise ratios for every model", NOT_MEASURABLE
    n = sum(r >= 0.9 for r in fits.values())
    return (f"R² >= 0.9 for {_count(n, len(fits))} models (median R² {np.nanmedian(list(fits.values())):.3f})",
            _most(n, len(fits)))


S431, S432, S433 = "4.3.1 structure", "4.3.2 feature", "4.3.3 supervision"
CLAIMS = (
    Claim(S431, "all datasets", "Most HNN algorithms exhibit strong robustness against random structural noise, "
          "experiencing only marginal performance drops or even remaining nearly unaffected under high perturbation "
          "rates.", _structure_most),
    Claim(S431, "Cora", "For example, when 90% of hyperlinks are randomly removed from Cora, 7 out of 10 methods "
          "degrade by less than 7%.", _removal_7pct),
    Claim(S431, "Actor", "Similarly, when 90% of random hyperlinks are injected into Actor, only 2 models show a "
          "noticeable decline in performance.", None),
    Claim(S431, "all datasets", "Spectral-based approaches are generally more vulnerable to structural "
          "perturbations.", _spectral_vs_rest),
    Claim(S431, "Pubmed", "On Pubmed, for instance, increasing the ratio of noisy hyperlinks results in a pronounced "
          "performance decline across four spectral-based methods (HGNN, PhenomNN, DPHGNN, and TF-HNN), whereas most "
          "other methods remain stable.", _named_spectral_addition),
    Claim(S431, "Actor", "For example, on the Actor dataset, SheafHyperGNN suffers substantial performance "
          "degradation under hyperlink deletion but demonstrates strong robustness under hyperlink addition.", None),
    Claim(S431, "Cora", "In another case, PhenomNN exhibits strong robustness on Cora in the addition scenario while "
          "showing the opposite trend on Actor.", _phenomnn_addition),
    Claim(S432, "all datasets", "Feature perturbations under equal noise or sparsity levels result in greater "
          "performance degradation than structural ones, indicating a more critical role of node features in model "
          "prediction.", _feature_vs_structure),
    Claim(S432, "all datasets", "With increasing noise intensity, model accuracy decreases sharply at the beginning "
          "and then stabilizes, as highly corrupted features approximate randomness and lose predictive utility.",
          _noise_sharp_then_stable),
    Claim(S432, "all datasets", "As the feature masking rate increases, model performance degrades progressively "
          "faster, with a slow decline at low ratios and a sharp drop under high sparsity.", _mask_accelerates),
    Claim(S432, "all datasets", "Compared to feature sparsity, feature noise poses a greater challenge for HNN "
          "algorithms, with equivalent levels of noise typically resulting in lower predictive accuracy across "
          "different datasets.", _noise_vs_mask),
    Claim(S433, "all datasets", "As noise intensity increases or supervision becomes sparser, all models show a clear "
          "downward trend in performance, with label noise exerting a more pronounced impact.",
          _supervision_all_decline),
    Claim(S433, "all datasets", "(same sentence) ... with label noise exerting a more pronounced impact.",
          _label_noise_vs_sparsity),
    Claim(S433, "all datasets", "Increasing label noise generally causes a rapid yet steady decline in performance, "
          "which appears approximately linear in most cases.", _label_noise_linear),
    Claim(S433, "all datasets", "The impact of supervision sparsity is modest at lower levels but intensifies at "
          "higher ratios, resulting in an accelerating decline in model performance.", _sparsity_accelerates),
    Claim(S433, "homophilic vs heterophilic datasets", "Label noise and sparsity tend to degrade performance more "
          "substantially on homophilic datasets than on heterophilic ones, reflecting the reliance of model "
          "predictions on data homophily.", None),
)


def accuracies(by: dict[tuple[str, str], dict[str, dict[float, Any]]], dataset: str) -> tuple[Acc, dict[str, list]]:
    """``kind -> model -> ratio -> mean test accuracy`` of ``dataset`` from the report's ok cells, and each model's
    seeds: every mean is taken over the seeds that all of the model's cells share, so a drop compares the clean and
    the perturbed runs of the same seeds (a model trained on more seeds at some ratios is cut to the common ones)."""
    cells: dict[str, list[tuple[str, float, dict]]] = {}
    for (ds, kind), models in by.items():
        if ds == dataset:
            for model, by_ratio in models.items():
                cells.setdefault(model, []).extend((kind, r, c) for r, c in by_ratio.items() if c.get("status") == "ok")
    acc: Acc = {}
    seeds: dict[str, list] = {}
    for model, items in sorted(cells.items()):
        common = set.intersection(*(set(c["seeds"]) for _, _, c in items))
        seeds[model] = sorted(common)
        for kind, r, c in items:
            values = dict(zip(c["seeds"], c["metrics"]["test"]["accuracy"]["values"]))
            if common:
                acc.setdefault(kind, {}).setdefault(model, {})[r] = float(np.mean([values[k] for k in sorted(common)]))
    return acc, seeds


def claim_rows(dataset: str, acc: Acc) -> list[dict[str, str]]:
    """One row per claim: section, what it is about, the paper's words, our measurement on ``dataset``, verdict."""
    rows = []
    name = dataset.capitalize() if dataset.islower() else dataset
    for c in CLAIMS:
        if c.check is None:
            measured, verdict = f"{c.about} not run here ({name} only)", NOT_MEASURABLE
        else:
            measured, verdict = c.check(acc)
            if c.about not in ("all datasets", name):  # a statement about another set, checked on this one
                measured = f"stated for {c.about}; on {name}: {measured}"
        rows.append({"section": c.section, "about": c.about, "quote": c.quote, "measured": measured,
                     "verdict": verdict})
    return rows
