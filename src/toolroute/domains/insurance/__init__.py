"""The Korean insurance TMR domain (seed 002): 54 tools in 8 modules.

The names are the contract of `shared/spec/insurance_tools.md`: card names, tool names and every
evaluation label use them exactly.
"""

LABEL = "보험"  # the domain in its users' words (refusals, page titles)

TOOL_MODULES: dict[str, list[str]] = {
    "product": [
        "product_search", "product_get", "product_compare", "product_latest_version_check",
        "rider_list", "rider_search", "rider_get", "eligibility_by_product_rule",
        "product_faq_lookup", "sales_channel_availability",
    ],
    "premium": [
        "premium_estimate", "premium_compare", "plan_options", "amount_suggest",
        "renewal_premium_projection", "affordability_check", "payment_cycle_options",
        "surrender_value_explain",
    ],
    "coverage": [
        "coverage_summary", "coverage_detail", "benefit_amount_lookup", "benefit_limit_rules",
        "event_eligibility_check", "diagnosis_definition_lookup", "icd_mapping_lookup",
        "multi_benefit_conflict_rule", "rider_bundle_recommend",
    ],
    "underwriting": [
        "underwriting_precheck", "underwriting_questions_generator", "underwriting_knockout_rules",
        "underwriting_docs_required", "underwriting_waiting_periods", "underwriting_exclusions",
        "underwriting_limitations", "underwriting_reinstatement_rule", "underwriting_renewal_eligibility",
        "underwriting_renewal_premium_notice", "underwriting_high_risk_job_check",
        "underwriting_disclosure_risk_score",
    ],
    "compliance": [
        "compliance_required_disclosure", "compliance_phrase_generator", "compliance_misleading_check",
        "comparison_disclaimer_generator", "recording_notice_script", "privacy_masking",
    ],
    "claims": ["claim_guide", "claim_required_forms", "contract_manage", "customer_followup_tasks"],
    "customer_db": ["customer_contract_lookup", "duplicate_enrollment_check", "customer_search"],
    "rag_tools": ["rag_terms_query_engine", "rag_product_info_query_engine"],
}

TOOL_NAMES: list[str] = [name for names in TOOL_MODULES.values() for name in names]

# The confusion pairs the spec names; the cards must declare each on both sides.
SPEC_CONFUSION_PAIRS: list[tuple[str, str]] = [
    ("product_search", "coverage_summary"),
    ("coverage_summary", "coverage_detail"),
    ("underwriting_precheck", "eligibility_by_product_rule"),
    ("claim_guide", "coverage_detail"),
    ("rag_terms_query_engine", "rag_product_info_query_engine"),
    ("premium_estimate", "plan_options"),
    ("coverage_detail", "benefit_amount_lookup"),
    ("renewal_premium_projection", "underwriting_renewal_premium_notice"),
    ("claim_required_forms", "underwriting_docs_required"),
    ("claim_guide", "claim_required_forms"),
]
