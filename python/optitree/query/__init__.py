"""Query trees: identify an object, or its group, with the fewest (or exponentially weighted)
yes/no questions (Bellala, Bhavnani & Scott).

>>> from optitree.query import QueryTree, alpha_from_lambda
>>> alpha_from_lambda(4.0)
0.3333333333333333
"""

from optitree.query._entropy import alpha_from_lambda, lower_bound, renyi_entropy, shannon_entropy
from optitree.query._estimator import CRITERIA, MAX_OPTIMAL_OBJECTS, QueryTree
from optitree.query._model import CostDecomposition, QuestionTree
from optitree.query._session import QuerySession

__all__ = [
    "CRITERIA",
    "MAX_OPTIMAL_OBJECTS",
    "CostDecomposition",
    "QuerySession",
    "QueryTree",
    "QuestionTree",
    "alpha_from_lambda",
    "lower_bound",
    "renyi_entropy",
    "shannon_entropy",
]
