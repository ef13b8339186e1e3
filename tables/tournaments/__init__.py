"""WiderPoker tournaments: many hands on one shared board each, played with the tournament's
own chips (seed 000, Glossary "Game Hand": "Usually a tournament consists of many hands").

A tournament plays its hands at a table of its own, through the platform's hand machinery
(deal, purchases, settlement, refunds: ``tables.services``): the table's currency is the
tournament's chips (``wallet.models.chip_currency``), so every ante, draw, redeal, prize and
refund of its hands is a ledger transfer in chips, sealed in the chips' own hash chain and
covered by the books check. The real money is held at registration, captured into the
tournament's prize pool at the start and paid by the engine's allocation at the end
(docs/tournaments.md).
"""
