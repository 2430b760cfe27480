"""The 22 DHG-Bench datasets (sec. 3.1, appendix A.1, Tables A1-A3) plus Citeseer, registered at import.

Node level (13): Cora, Pubmed, Cora-CA, DBLP-CA, NTU2012, ModelNet40, Walmart, Trivago, Actor, Amazon-ratings
(Ratings), Twitch-gamers (Gamers), Pokec, Yelp. Fairness (3): German, Bail, Credit. Graph level (6): RHG-10,
RHG-3, IMDB-Dir-Form, IMDB-Dir-Genre, Steam-Player, Twitter-Friend. Citeseer is in DHG-Bench's library (not in
its tables). Hyperedge prediction uses Cora, Pubmed, Cora-CA, DBLP-CA, Actor and Pokec.
"""
from __future__ import annotations

from .formats import load_allset_le, load_cornell, load_hic, load_pickle_triple, load_trivago, load_yelp
from .registry import register_dataset
from .sources import RawSource

HYPERGCN = RawSource("HyperGCN", "HyperGCN", "https://raw.githubusercontent.com/malllabiisc/HyperGCN/HEAD",
                     "https://github.com/malllabiisc/HyperGCN")
# AllSet's raw data is a zip (AllSet_all_raw_data) unpacked under AllSet's data/; ED-HNN mirrors that folder
# file by file on the Hub, which gives per-file URLs.
ALLSET = RawSource("AllSet", "AllSet/data/AllSet_all_raw_data",
                   "https://huggingface.co/datasets/peihaowang/edgnn-hypergraph-dataset/resolve/main",
                   "https://github.com/jianhao2016/AllSet")
# Kim et al. 2023 distribute their tensors only through a Dropbox folder: a raw root is required.
TRIVAGO = RawSource("Kim et al. 2023 (PCL)", "PCL/src/data", None,
                    "https://www.dropbox.com/sh/qhz6rqol5mue4wc/AAByciJuLNba8uGv8MdMpbf-a?dl=0")
HYPERUFG = RawSource("HyperUFG", "HyperUFG", "https://raw.githubusercontent.com/kellysylvia77/HyperUFG/HEAD",
                     "https://github.com/kellysylvia77/HyperUFG")
HYPERGCL = RawSource("HyperGCL", "HyperGCL", "https://raw.githubusercontent.com/weitianxin/HyperGCL/HEAD",
                     "https://github.com/weitianxin/HyperGCL")
HIC = RawSource("HIC", "HIC", "https://raw.githubusercontent.com/iMoonLab/HIC/HEAD", "https://github.com/iMoonLab/HIC")

_HYPERGCN_BIB = """@inproceedings{yadati2019hypergcn,
  title = {HyperGCN: A New Method For Training Graph Convolutional Networks on Hypergraphs},
  author = {Yadati, Naganand and Nimishakavi, Madhav and Yadav, Prateek and Nitin, Vikram and Louis, Anand and Talukdar, Partha},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2019}
}"""
_HGNN_BIB = """@inproceedings{feng2019hypergraph,
  title = {Hypergraph Neural Networks},
  author = {Feng, Yifan and You, Haoxuan and Zhang, Zizhao and Ji, Rongrong and Gao, Yue},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year = {2019}
}"""
_ALLSET_BIB = """@inproceedings{chien2022you,
  title = {You are AllSet: A Multiset Function Framework for Hypergraph Neural Networks},
  author = {Chien, Eli and Pan, Chao and Peng, Jianhao and Milenkovic, Olgica},
  booktitle = {International Conference on Learning Representations},
  year = {2022},
  url = {https://openreview.net/forum?id=hpBTIv2uy_E}
}"""
_TRIVAGO_BIB = """@article{kim2023datasets,
  title = {Datasets, Tasks, and Training Methods for Large-scale Hypergraph Learning},
  author = {Kim, Sunwoo and Lee, Dongjin and Kim, Yul and Park, Jungho and Hwang, Taeho and Shin, Kijung},
  journal = {Data Mining and Knowledge Discovery},
  year = {2023}
}"""
_HYPERUFG_BIB = """@inproceedings{li2025hypergraph,
  title = {When Hypergraph Meets Heterophily: New Benchmark Datasets and Baseline},
  author = {Li, Ming and others},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year = {2025},
  url = {https://github.com/kellysylvia77/HyperUFG}
}"""
_HYPERGCL_BIB = """@inproceedings{wei2022augmentations,
  title = {Augmentations in Hypergraph Contrastive Learning: Fabricated and Generative},
  author = {Wei, Tianxin and You, Yuning and Chen, Tianlong and Shen, Yang and He, Jingrui and Wang, Zhangyang},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2022}
}"""
_HIC_BIB = """@article{feng2024hypergraph,
  title = {Hypergraph Isomorphism Computation},
  author = {Feng, Yifan and Han, Jiashu and Ying, Shihui and Gao, Yue},
  journal = {IEEE Transactions on Pattern Analysis and Machine Intelligence},
  year = {2024}
}"""

_NODE = ("node_classification",)
_NODE_EDGE = ("node_classification", "hyperedge_prediction")
_FAIR = ("node_classification", "fairness")
_GRAPH = ("hypergraph_classification",)


def _a1(nodes, edges, features, avg_size, h_edge, classes):
    return {"nodes": nodes, "hyperedges": edges, "features": features, "avg_hyperedge_size": avg_size,
            "hyperedge_homophily": h_edge, "classes": classes}


def _triple(folder: str, sensitive_column: int | None = None):
    def loader(reader, *, features: bool, name: str):
        return load_pickle_triple(reader, folder, features=features, name=name, sensitive_column=sensitive_column)
    return loader


def _triple_files(folder: str, with_features: bool = True) -> tuple[str, ...]:
    names = ("hypergraph", "labels", "features") if with_features else ("hypergraph", "labels")
    return tuple(f"{folder}/{n}.pickle" for n in names)


# ----------------------------------------------------------------------------- HyperGCN (co-citation, co-authorship)
_HYPERGCN_TERMS = "HyperGCN repository (Apache-2.0); the citation data come from Planetoid / LINQS."
_CITATION_TEXT = ("Cora and Pubmed are co-citation networks where nodes represent papers and hyperedges connect "
                  "papers cited together. Node features are Bag-of-Words (BoW) representations of the documents, "
                  "and labels indicate paper categories.")
_COAUTHOR_TEXT = ("Cora-CA and DBLP-CA are co-authorship hypergraphs, with nodes as papers and hyperedges linking all "
                  "papers co-authored by the same author. Node features are Bag-of-Words (BoW) representations of "
                  "the documents, and labels indicate paper categories.")

for _name, _display, _folder, _stats, _tasks, _text in (
    ("cora", "Cora", "data/cocitation/cora", _a1(2708, 1579, 1433, 3.03, 0.75, 7), _NODE_EDGE, _CITATION_TEXT),
    ("citeseer", "Citeseer", "data/cocitation/citeseer",
     {"nodes": 3312, "hyperedges": 1079, "features": 3703, "classes": 6}, _NODE,
     "Citeseer co-citation hypergraph of HyperGCN (in DHG-Bench's library, not in the paper's tables; statistics "
     "from DHG-Bench's README)."),
    ("pubmed", "Pubmed", "data/cocitation/pubmed", _a1(19717, 7963, 500, 4.35, 0.78, 3), _NODE_EDGE, _CITATION_TEXT),
    ("cora-ca", "Cora-CA", "data/coauthorship/cora", _a1(2708, 1072, 1433, 4.28, 0.78, 7), _NODE_EDGE,
     _COAUTHOR_TEXT),
    ("dblp-ca", "DBLP-CA", "data/coauthorship/dblp", _a1(41302, 22363, 1425, 4.45, 0.87, 6), _NODE_EDGE,
     _COAUTHOR_TEXT),
):
    register_dataset(_name, display_name=_display, level="node", tasks=_tasks, source=HYPERGCN,
                     files=_triple_files(_folder), feature_file=f"{_folder}/features.pickle", paper_stats=_stats,
                     description=_text, license="apache-2.0", license_note=_HYPERGCN_TERMS,
                     citation=_HYPERGCN_BIB)(_triple(_folder))

# ----------------------------------------------------------------------------- AllSet raw files
_LE_TEXT = ("{n} is a computer vision and graphics dataset ({detail}). For each object, features are extracted using "
            "both GVCNN and MVCNN. Following (Feng et al., 2019), hyperedges aggregate the nearest neighbors of each "
            "node based on Euclidean distance.")
for _name, _display, _stats, _detail in (
    ("ntu2012", "NTU2012", _a1(2012, 2012, 100, 5.00, 0.79, 67), "2,012 3D shapes from 67 categories"),
    ("modelnet40", "ModelNet40", _a1(12311, 12311, 100, 5.00, 0.87, 40), "12,311 3D objects from 40 categories"),
):
    def _le_loader(reader, *, features: bool, name: str, _dataset=_display):
        return load_allset_le(reader, _dataset, features=features, name=name)

    register_dataset(_name, display_name=_display, level="node", tasks=_NODE, source=ALLSET,
                     files=(f"{_display}/{_display}.content", f"{_display}/{_display}.edges"),
                     feature_file=None, paper_stats=_stats,
                     description=_LE_TEXT.format(n=_display, detail=_detail), license="other",
                     license_note="AllSet raw data (AllSet code is MIT); features from the HGNN release (Feng et al. "
                                  "2019) of the NTU and ModelNet40 shape collections.",
                     citation=_HGNN_BIB + "\n" + _ALLSET_BIB)(_le_loader)


@register_dataset(
    "walmart", display_name="Walmart", level="node", tasks=_NODE, source=ALLSET,
    files=("walmart-trips/node-labels-walmart-trips.txt", "walmart-trips/hyperedges-walmart-trips.txt"),
    feature_file=None, paper_stats=_a1(88860, 69906, 100, 6.59, 0.60, 11),
    description="The Walmart dataset models a hypergraph where nodes represent products and hyperedges capture sets of "
                "products purchased together. Node labels indicate product categories. Each node feature is a "
                "100-dimensional vector obtained by adding Gaussian noise N(0, sigma^2 I) with sigma = 0.6 to one-hot "
                "encodings of the labels.",
    license="other", license_note="Cornell 'walmart-trips' hypergraph (Amburg et al. 2020) as redistributed in "
                                  "AllSet's raw data; features are synthetic (seeded noise).",
    citation=_ALLSET_BIB, options={"feature_noise": 0.6, "feature_dim": 100, "seed": 0})
def _walmart(reader, *, features: bool, name: str, feature_noise: float, feature_dim: int, seed: int):
    return load_cornell(reader, "walmart-trips", features=features, name=name, feature_dim=int(feature_dim),
                        feature_noise=float(feature_noise), seed=int(seed))


@register_dataset(
    "yelp", display_name="Yelp", level="node", tasks=_NODE, source=ALLSET,
    files=tuple(f"yelp/yelp_restaurant_{n}.csv" for n in ("business_stars", "incidence_H", "latlong", "locations",
                                                            "name")),
    feature_file="yelp/yelp_restaurant_latlong.csv", paper_stats=_a1(50758, 679302, 1862, 6.66, 0.29, 9),
    description="The Yelp dataset is a hypergraph where nodes represent restaurants and hyperedges link those visited "
                "by the same user. Node labels denote average star ratings (1.0-5.0 in 0.5 steps). Features include "
                "geographic coordinates, one-hot encodings of city/state, and BoW vectors from the top-1000 restaurant "
                "name tokens.",
    license="other", license_note="Derived from the Yelp Open Dataset (Yelp's dataset terms of use) as processed in "
                                  "AllSet's raw data.",
    citation=_ALLSET_BIB)
def _yelp(reader, *, features: bool, name: str):
    return load_yelp(reader, features=features, name=name)


@register_dataset(
    "trivago", display_name="Trivago", level="node", tasks=_NODE, source=TRIVAGO,
    files=tuple(f"trivago/trivago_{n}.pt" for n in ("X_vec", "Y", "E")), feature_file="trivago/trivago_X_vec.pt",
    paper_stats=_a1(172738, 233202, 300, 3.12, 0.98, 160),
    description="Trivago is a hotel-web search hypergraph where each node indicates a hotel, and each hyperedge "
                "corresponds to a user. If a user has visited the website of a particular hotel, the node is added to "
                "the user's hyperedge. Each hotel's class is labeled based on the country in which it is located.",
    license="unknown", license_note="Kim et al. 2023 tensors (no licence stated), built from the Trivago RecSys "
                                    "Challenge 2019 data.",
    citation=_TRIVAGO_BIB)
def _trivago(reader, *, features: bool, name: str):
    return load_trivago(reader, "trivago", features=features, name=name)


# ----------------------------------------------------------------------------- HyperUFG heterophilic sets
_HYPERUFG_TERMS = "HyperUFG repository (no licence file upstream); built from SNAP / AMiner sources."
for _name, _display, _folder, _stats, _tasks, _text in (
    ("actor", "Actor", "actor", _a1(16255, 10164, 50, 5.25, 0.46, 3), _NODE_EDGE,
     "The actor co-occurrence network: nodes are people involved in film production (actors, directors, writers), "
     "hyperedges their joint participation in a single film; attributes from Wikipedia keywords, labels the role."),
    ("amazon-ratings", "Amazon-ratings", "amazon", _a1(22299, 2090, 111, 3.10, 0.37, 5), _NODE,
     "Amazon co-purchasing products (books, music CDs, DVDs, VHS tapes); hyperedges link products frequently "
     "purchased together; the task is each product's average rating level; BoW features of product descriptions."),
    ("twitch-gamers", "Twitch-gamers", "twitch", _a1(16812, 2627, 7, 6.23, 0.49, 2), _NODE,
     "Twitch accounts; hyperedges from mutual follows within specific timeframes; features such as view counts, "
     "timestamps, language, activity; the task is whether a channel hosts explicit content."),
    ("pokec", "Pokec", "pokec", _a1(14998, 2406, 65, 2.29, 0.45, 2), _NODE_EDGE,
     "Pokec social network users; hyperedges are each user's full set of friends; labels are user-reported gender; "
     "features from profile information."),
):
    register_dataset(_name, display_name=_display, level="node", tasks=_tasks, source=HYPERUFG,
                     files=_triple_files(f"datasets/{_folder}"), feature_file=f"datasets/{_folder}/features.pickle",
                     paper_stats=_stats, description=_text, license="unknown", license_note=_HYPERUFG_TERMS,
                     citation=_HYPERUFG_BIB)(_triple(f"datasets/{_folder}"))

# ----------------------------------------------------------------------------- HyperGCL fairness sets
_HYPERGCL_TERMS = ("HyperGCL repository (no licence file upstream); original tabular data from NIFTY (MIT). Hyperedges: "
                   "each node with its 5 nearest neighbours by 1/(1+euclidean distance) on normalised features.")
for _name, _display, _stats, _column, _text in (
    ("german", "German", {"nodes": 1000, "hyperedges": 1000, "features": 27, "sensitive": "Gender",
                          "label": "Credit status"}, 0,
     "Clients of the German Bank; hyperedges link individuals with the most similar credit accounts. The task is to "
     "classify credit risk as high or low; the sensitive attribute is gender."),
    ("bail", "Bail", {"nodes": 18876, "hyperedges": 18876, "features": 18, "sensitive": "Race",
                      "label": "Bail decision"}, 0,
     "Defendants released on bail at U.S. state courts 1990-2009; hyperedges from the similarity of past criminal "
     "records. The task is whether a defendant is on bail; the sensitive attribute is race."),
    ("credit", "Credit", {"nodes": 30000, "hyperedges": 30000, "features": 13, "sensitive": "Age",
                          "label": "Future default"}, 1,
     "Credit card users; hyperedges from the similarity of spending and payment patterns. The task is the default "
     "status; the sensitive attribute is age (<25 / >25)."),
):
    _folder = f"data/fair_data/{_name}"
    register_dataset(_name, display_name=_display, level="node", tasks=_FAIR, source=HYPERGCL,
                     files=_triple_files(_folder), feature_file=f"{_folder}/features.pickle", paper_stats=_stats,
                     description=_text + f" The sensitive attribute is feature column {_column} and stays in x.",
                     license="unknown", license_note=_HYPERGCL_TERMS,
                     citation=_HYPERGCL_BIB)(_triple(_folder, sensitive_column=_column))

# ----------------------------------------------------------------------------- HIC graph-level sets
for _name, _display, _relpath, _stats, _text in (
    ("rhg-10", "RHG-10", "data/hypergraph/RHG/RHG_10.txt", (2000, 31.3, 29.8, 5.2, 10),
     "Synthetic hypergraphs of ten factor structures (Hyper Flower, Pyramid, Checked Table, Wheel, Lattice, Windmill, "
     "Firm Pyramid, RChecked Table, Cycle, Fern)."),
    ("rhg-3", "RHG-3", "data/hypergraph/RHG/RHG_3.txt", (1500, 35.5, 17.9, 6.9, 3),
     "Random hypergraphs of three structures: Hyper Pyramid, Hyper Checked Table and Hyper Wheel."),
    ("imdb-dir-form", "IMDB-Dir-Form", "data/hypergraph/IMDB/IMDB_dir_form.txt", (1869, 15.7, 39.2, 3.7, 3),
     "Co-director hypergraphs from IMDB (the director of each movie is a hypergraph); the movie category is its form "
     "(animation, documentary, drama)."),
    ("imdb-dir-genre", "IMDB-Dir-Genre", "data/hypergraph/IMDB/IMDB_dir_genre.txt", (3393, 17.3, 36.4, 3.8, 3),
     "Co-director hypergraphs from IMDB; the movie category is its genre (adventure, crime, family)."),
    ("steam-player", "Steam-Player", "data/hypergraph/STEAM/stream_player.txt", (2048, 13.8, 46.4, 4.5, 2),
     "Each player is a hypergraph: vertices are games played, hyperedges link games with shared tags; the target is "
     "the player's preference (single-player or multiplayer)."),
    ("twitter-friend", "Twitter-Friend", "data/hypergraph/TWITTER/twitter_friend.txt", (1310, 21.6, 84.3, 4.3, 2),
     "Each hypergraph is the friends of a Twitter user, hyperedges link users who are friends; the label is whether "
     "the user posted about 'National Dog Day' or 'Respect Tyler Joseph'."),
):
    def _hic_loader(reader, *, features: bool, name: str, _relpath=_relpath):
        return load_hic(reader, _relpath, name=name)

    register_dataset(_name, display_name=_display, level="graph", tasks=_GRAPH, source=HIC, files=(_relpath,),
                     feature_file=None,
                     paper_stats=dict(zip(("hypergraphs", "avg_nodes", "avg_hyperedges", "avg_hyperedge_size",
                                           "classes"), _stats)),
                     description=_text + " Vertex features are one-hot vertex degree over the dataset's degree "
                                         "vocabulary (the file's vertex labels are discarded).",
                     license="apache-2.0", license_note="HIC repository (Apache-2.0).", citation=_HIC_BIB)(_hic_loader)
