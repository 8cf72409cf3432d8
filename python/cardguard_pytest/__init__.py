"""pytest-cardguard: a pytest suite in cardguard's lanes.

``cardguard pytest -- ARGS`` collects through :mod:`cardguard_pytest.collect` and runs each card's
share in a pytest lane (:mod:`cardguard_pytest.lane`). The always-loaded part
(:mod:`cardguard_pytest.plugin`) registers the ``cardguard`` marker, the ``cardguard_device_errors``
ini key, the hooks and the ``cardguard_pool`` fixture, so a suite also runs under plain pytest.
"""

from cardguard_pytest.ids import Case, case_of
from cardguard_pytest.pool import Pool

__all__ = ["Case", "Pool", "case_of"]
__version__ = "0.1.0"
