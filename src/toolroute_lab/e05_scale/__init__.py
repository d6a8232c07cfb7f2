"""Notebook 05 (scale): routing as the catalogue grows, and how tools crowd each other.

Its declaration (`SCALE`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment


def _check_scale(values: dict) -> None:
    from toolroute_lab.e05_scale.scale import check_parameters  # loaded when its check runs: the declarations stay import-light

    from toolroute_lab.e05_scale import crowding  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["sizes"], values["arms"], values["split"], values["bfcl_categories"], values["bfcl_arms"])
    crowding.check_parameters(values["korean_added"], values["korean_splits"], values["korean_field_sets"])


SCALE = Experiment(
    "05_scale", "Routing at scale", check=_check_scale,
    about="The 54 Korean cards among Korean tools of other business lines (the same-language crowding test, "
          "up to 268 tools) and among up to 2,628 English ones (BFCL's function documents), and routing on "
          "BFCL's own questions and tools.",
    tables=("korean_crowding.csv", "scale.csv", "bfcl_routing.csv", "edit_cost.csv"), figures=("scale.png",))
