"""A council: five read-only advisors, an anonymous peer review, and a chairman's verdict.

    advisors   the five perspectives and the chairman, prompts read from the plugin's agents
    triage     during a goal, which questions a council may take and which a cheap check
               settles first
    sdk        one advisor's answer through claude-agent-sdk, held read-only by the guard
    convene    the three rounds, the cost, the goal's charge
    record     `.forge/councils/<id>.md`
"""
