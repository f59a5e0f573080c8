"""Words too common to say anything about a topic (English; other languages pass through).

Shared by the recall block's query and search's reading of questions: "when did we move the
cache to redis?" is about ``move cache redis``, and a BM25 over "when", "did" and "we" would
rank every message that says them.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    """a an the i me my we us you he it is am be to of in on at by or as if so no do
    about above after again up vs against all also and any are because been before being below
    between both but can could did does doing down during each few for from further had has
    have having her here hers herself him himself his how into its itself just let like more
    most much must myself nor not now off once only other our ours ourselves out over own same
    she should some such than that the their theirs them themselves then there these they
    this those through too under until very was were what when where which while who whom why
    will with would you your yours yourself yourselves please thanks thank okay yes yeah hey
    hello tell know think want need get got make use using used one two way really sure
    ever even again anything something thing things still back many lot lots""".split()  # noqa: SIM905
)
