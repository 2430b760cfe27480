"""BibTeX entries the metric folders cite, each written once; a metric's ``_CITATION`` joins the ones it uses."""
from __future__ import annotations

__all__ = ["DHGBENCH", "SCIKIT_LEARN", "DWORK2012", "HARDT2016"]

DHGBENCH = r"""@misc{dhgbench,
  title={DHG-Bench: A Comprehensive Benchmark for Deep Hypergraph Learning},
  howpublished={\url{https://github.com/Coco-Hut/DHG-Bench}}
}
"""

SCIKIT_LEARN = """@article{scikit-learn,
  title={Scikit-learn: Machine Learning in {P}ython},
  author={Pedregosa, F. and Varoquaux, G. and Gramfort, A. and Michel, V. and Thirion, B. and Grisel, O. and
          Blondel, M. and Prettenhofer, P. and Weiss, R. and Dubourg, V. and Vanderplas, J. and Passos, A. and
          Cournapeau, D. and Brucher, M. and Perrot, M. and Duchesnay, E.},
  journal={Journal of Machine Learning Research},
  volume={12},
  pages={2825--2830},
  year={2011}
}
"""

DWORK2012 = """@inproceedings{dwork2012fairness,
  title={Fairness through awareness},
  author={Dwork, Cynthia and Hardt, Moritz and Pitassi, Toniann and Reingold, Omer and Zemel, Richard},
  booktitle={Proceedings of the 3rd Innovations in Theoretical Computer Science Conference},
  pages={214--226},
  year={2012}
}
"""

HARDT2016 = """@inproceedings{hardt2016equality,
  title={Equality of opportunity in supervised learning},
  author={Hardt, Moritz and Price, Eric and Srebro, Nati},
  booktitle={Advances in Neural Information Processing Systems},
  year={2016}
}
"""
