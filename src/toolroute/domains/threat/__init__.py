"""The air-defence threat domain (seed 000): three tools an agent may chain, at most three steps.

    assess_threat_level                 target type, altitude, speed (+ distance, heading) -> rule-based grade
    lookup_response_procedure           a threat pattern or question -> passages of the procedure documents
    check_intercept_asset_availability  target type (+ sector) -> simulated, seeded asset status

Training / simulation only: the rules (`data/threat_rules.yaml`), the assets
(`data/intercept_assets.yaml`) and the procedure documents (`data/procedures.yaml`) are synthetic.
The names below are the contract: cards, tools, eval queries and tasks use them exactly.
"""

LABEL = "위협 평가"  # the domain in its users' words (refusals, page titles)

TOOL_MODULES: dict[str, list[str]] = {
    "tools": ["assess_threat_level", "lookup_response_procedure", "check_intercept_asset_availability"],
}

TOOL_NAMES: list[str] = [name for names in TOOL_MODULES.values() for name in names]
