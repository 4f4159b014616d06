"""The paper's published numbers, copied from its tables, to print beside ours for the same rows.

Tables cert-poly and cert-rbf (section 5.1.1: mean gap % to the certified optimum, # solved, # pbs),
cert-rfe (RFE baselines), the mean times quoted in the text of section 5.1.1, cert-coverage
(appendix app:cert), b2-summary (section 5.1.2) and the parameter study of appendix app:param.
All of them are for the paper's sense (minimise f) with C = 10, gamma = 0.1 on the Apple M1 machine
(enumeration: a 128-vCPU AWS c6i.32xlarge).
"""
from __future__ import annotations

#: the paper's display names of our dataset keys
DATASET_TITLES = {
    "wholesale": "Wholesale", "diabetes": "Diabetes", "bcw": "BCW", "cleveland": "Cleveland",
    "parkinsons": "Parkinsons", "german": "German", "bcd": "BCD", "ionosphere": "Ionosphere",
    "sonar": "Sonar",
}

#: cert-poly / cert-rbf / cert-rfe: family -> dataset -> method -> (gap %, # solved, # pbs)
CERTIFIED = {
    "poly": {
        "wholesale": {"ipopt": (1.29, 5, 9), "knitro": (0.96, 6, 9), "ls*": (0.00, 9, 9), "acso*": (0.00, 9, 9),
                      "rfe1": (0.81, 7, 9), "rfe2": (0.00, 9, 9)},
        "diabetes": {"ipopt": (2.26, 0, 12), "knitro": (2.78, 1, 12), "ls*": (0.02, 11, 12),
                     "acso*": (0.00, 12, 12), "rfe1": (3.97, 2, 12), "rfe2": (0.05, 10, 12)},
        "bcw": {"ipopt": (12.99, 3, 12), "knitro": (11.21, 3, 12), "ls*": (0.00, 12, 12), "acso*": (0.00, 12, 12),
                "rfe1": (20.44, 3, 12), "rfe2": (6.78, 5, 12)},
        "cleveland": {"ipopt": (11.15, 3, 18), "knitro": (9.12, 5, 18), "ls*": (0.24, 17, 18),
                      "acso*": (0.00, 18, 18), "rfe1": (18.96, 3, 18), "rfe2": (1.90, 12, 18)},
        "parkinsons": {"ipopt": (2.65, 6, 33), "knitro": (2.52, 9, 33), "ls*": (0.27, 24, 33),
                       "acso*": (0.10, 29, 33), "rfe1": (5.34, 5, 33), "rfe2": (1.83, 12, 33)},
        "german": {"ipopt": (2.03, 11, 27), "knitro": (3.66, 8, 27), "ls*": (0.04, 24, 27), "acso*": (0.00, 27, 27),
                   "rfe1": (0.89, 17, 27), "rfe2": (0.55, 20, 27)},
        "bcd": {"ipopt": (8.97, 8, 36), "knitro": (12.01, 10, 36), "ls*": (17.20, 16, 36), "acso*": (8.80, 24, 36),
                "rfe1": (45.81, 3, 36), "rfe2": (55.63, 0, 36)},
        "ionosphere": {"ipopt": (12.92, 2, 30), "knitro": (15.14, 2, 30), "ls*": (1.87, 18, 30),
                       "acso*": (1.22, 23, 30), "rfe1": (23.17, 0, 30), "rfe2": (14.64, 2, 30)},
        "sonar": {"ipopt": (7.56, 1, 18), "knitro": (9.91, 0, 18), "ls*": (0.95, 11, 18), "acso*": (0.19, 15, 18),
                  "rfe1": (15.29, 0, 18), "rfe2": (7.63, 1, 18)},
        "overall": {"ipopt": (7.10, 39, 195), "knitro": (8.14, 44, 195), "ls*": (3.63, 142, 195),
                    "acso*": (1.85, 169, 195), "rfe1": (17.75, 40, 195), "rfe2": (14.21, 71, 195)},
    },
    "rbf": {
        "wholesale": {"ipopt": (1.64, 1, 3), "knitro": (1.14, 2, 3), "ls*": (0.00, 3, 3),
                      "rfe1": (0.00, 3, 3), "rfe2": (0.00, 3, 3)},
        "diabetes": {"ipopt": (0.82, 1, 4), "knitro": (3.20, 0, 4), "ls*": (0.00, 4, 4),
                     "rfe1": (0.33, 2, 4), "rfe2": (0.07, 3, 4)},
        "bcw": {"ipopt": (7.71, 1, 4), "knitro": (4.79, 1, 4), "ls*": (0.00, 4, 4),
                "rfe1": (12.24, 1, 4), "rfe2": (2.09, 3, 4)},
        "cleveland": {"ipopt": (10.03, 1, 6), "knitro": (10.03, 1, 6), "ls*": (0.00, 6, 6),
                      "rfe1": (20.84, 1, 6), "rfe2": (0.57, 4, 6)},
        "parkinsons": {"ipopt": (1.41, 2, 11), "knitro": (2.12, 3, 11), "ls*": (1.16, 6, 11),
                       "rfe1": (1.61, 3, 11), "rfe2": (1.11, 3, 11)},
        "german": {"ipopt": (1.68, 3, 9), "knitro": (2.19, 2, 9), "ls*": (0.03, 7, 9),
                   "rfe1": (0.80, 5, 9), "rfe2": (0.51, 6, 9)},
        "bcd": {"ipopt": (5.96, 2, 11), "knitro": (11.27, 2, 11), "ls*": (5.98, 5, 11),
                "rfe1": (37.03, 0, 11), "rfe2": (57.45, 0, 11)},
        "ionosphere": {"ipopt": (16.73, 0, 9), "knitro": (13.19, 0, 9), "ls*": (3.65, 5, 9),
                       "rfe1": (19.99, 0, 9), "rfe2": (8.58, 0, 9)},
        "sonar": {"ipopt": (4.66, 0, 6), "knitro": (9.40, 0, 6), "ls*": (2.20, 3, 6),
                  "rfe1": (7.55, 1, 6), "rfe2": (4.90, 0, 6)},
        "overall": {"ipopt": (5.93, 11, 63), "knitro": (6.95, 11, 63), "ls*": (1.98, 43, 63),
                    "rfe1": (13.22, 16, 63), "rfe2": (12.18, 22, 63)},
    },
}

#: mean running time (s) per method on the certified instances, quoted in section 5.1.1
#: (RFE1/RFE2: "mean selection time below 3 s", no exact figure)
CERTIFIED_TIME = {
    "poly": {"ls*": 1.3, "acso*": 1.2, "knitro": 62.0, "ipopt": 239.0},
    "rbf": {"ls*": 2.1, "knitro": 37.0, "ipopt": 111.0},
}

#: cert-coverage: dataset -> (n, m, Bmax, C(n, Bmax), # QP solved)
COVERAGE = {
    "wholesale": (7, 440, 3, 35, 2.5e2), "diabetes": (8, 768, 4, 70, 6.5e2), "bcw": (9, 699, 4, 126, 1.0e3),
    "cleveland": (13, 297, 6, 1.7e3, 1.6e4), "parkinsons": (22, 195, 11, 7.1e5, 9.8e6),
    "german": (24, 1000, 9, 1.3e6, 1.0e7), "bcd": (30, 569, 12, 8.6e7, 6.9e8),
    "ionosphere": (33, 351, 10, 9.3e7, 5.1e8), "sonar": (60, 208, 6, 5.0e7, 2.2e8),
}

#: b2-summary: method -> (# instances, mean gap to best-known %, # best-known reached, mean spread % or None)
MULTISTART = {
    "ipopt": (36, 10.35, 4, 38.6), "knitro": (36, 9.88, 7, 34.1), "rfe1": (36, 13.99, 3, None),
    "rfe2": (36, 6.23, 12, None), "ls*": (36, 0.51, 32, 6.3), "acso*": (27, 0.21, 26, 4.4),
}
#: mean time per run (s) at B = floor(n/2), polynomial kernels, quoted in section 5.1.2
MULTISTART_TIME = {"ls*": "2.1-2.9", "acso*": "2.1-2.9", "knitro": "25.7", "ipopt": "54.0"}

#: appendix app:param, mean gap to the best solution found (%) and cost, per parameter value
#: (values quoted in its text; the figures give the full curves): (gap %, cost or None, cost unit)
PARAMS = {
    ("ls*", "refit_fraction"): {"single": (3.0, None, ""), 0.1: (0.9, 415, "SVM solves"),
                                1.0: (None, 1518, "SVM solves")},
    ("ls*", "n_samples"): {100: (0.94, 4.31, "s"), 200: (None, None, ""), 1000: (0.79, 10.51, "s")},
    ("ls*", "opt_window"): {5: (1.49, None, ""), 10: (0.88, None, "")},
    ("acso*", "pool_size"): {50: (2.1, None, "at B = 0.3n"), 100: (0.69, None, "0.2 at B = 0.3n"),
                             200: (1.01, None, "")},
    ("acso*", "opt_window"): {5: (1.35, None, ""), 10: (0.61, None, ""), 15: (0.31, None, "")},
}
#: the paper's selected values
PARAM_CHOICE = {("ls*", "refit_fraction"): 0.1, ("ls*", "n_samples"): 200, ("ls*", "opt_window"): 10,
                ("acso*", "pool_size"): 100, ("acso*", "opt_window"): 10}
