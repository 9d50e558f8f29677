"""Provides the reading of files made elsewhere: exports, winner-only judgments, outputs, packets' results.

No SQL (sqlite3 is never imported here, a contract checks it): readers return domain records
and `services/` hands them to `store/`. Every reader goes through one CSV/JSONL reader
(`reader`) and one problem collector (`problems`), so limits and wordings are the same for all:
`export` (judgments.csv and scores.csv of `centaur export`), `outputs` (`centaur
import-outputs`), `winners` (winner-only judgments, MT-Bench's layout), `packet` (what a
judging packet brings back), `rules` (who may have judged what), `text` (single values).
Modules are imported where they are used: the app's start imports none of them.
"""
