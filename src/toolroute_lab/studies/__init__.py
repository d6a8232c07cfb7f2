"""Studies run outside the seven notebooks' main line: cascade, dialog routing, the fine-tuned e5, the guardrail's red-team sets, card expansion and the agent's option arms."""
