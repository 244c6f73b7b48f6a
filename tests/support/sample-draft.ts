// One envelope draft a scripted agent emits in engine tests: a documented status the endpoint breaks.
export function wrongStatusDraft(confidence: number) {
  return {
    domain: "api",
    defect_class: "wrong-status",
    title: "Creating an item answers 200 where the document promises 201",
    summary: "POST /items answers 200 OK; the OpenAPI document declares 201 Created.",
    location: { kind: "endpoint", value: "POST /items" },
    evidence: [
      {
        kind: "failing_test",
        description: "contract test asserting 201",
        test: {
          path: "tests/qaas/items-status.test.js",
          command: "node --test tests/qaas/items-status.test.js",
        },
      },
    ],
    reproduction: { steps: ["POST /items with a valid body", "observe 200"] },
    impact: "Clients that check for 201 treat success as failure.",
    severity: "low",
    confidence,
  };
}
