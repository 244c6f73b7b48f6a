import type { PreparedRequest } from "../api/request-builder.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";

// The parts of an XSS reproduction the server-HTML and the browser checks share: the step that saves the
// marker (with a fresh marker on every run of the test) and the page of the record that step creates.

/** The step that sent `marker`, with `<qaas-xss-{{unique}}>` in its place so each test run plants its own. */
export function markerStep(
  name: string,
  prepared: PreparedRequest,
  user: string | undefined,
  marker: string,
): ReproStep {
  const step = stepFromPrepared(name, prepared, user);
  // `{{unique}}` stays unencoded so the test fills in a fresh marker on every run.
  const encoded = `${encodeURIComponent("<qaas-xss-")}{{unique}}${encodeURIComponent(">")}`;
  step.path = step.path.split(encodeURIComponent(marker)).join(encoded);
  // A form body carries the marker URL-encoded; JSON carries it as is.
  if (step.body)
    step.body = step.body
      .split(marker)
      .join("<qaas-xss-{{unique}}>")
      .split(encodeURIComponent(marker))
      .join(encoded);
  return step;
}

/**
 * The page of the record the test saves itself: the id the probe's save answered with becomes the id the
 * test's own save answers with, so the test does not depend on a record a reset removed.
 */
export function recordPathOf(
  shownPath: string,
  resourceId: string | undefined,
  injectedStep: ReproStep,
): string {
  if (resourceId === undefined) return shownPath;
  const segments = shownPath.split("/");
  const index = segments.indexOf(encodeURIComponent(resourceId));
  if (index < 0) return shownPath;
  injectedStep.captureId = {};
  segments[index] = "{{injected.id}}";
  return segments.join("/");
}
