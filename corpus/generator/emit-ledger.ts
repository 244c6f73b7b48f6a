import { stringify } from "yaml";
import { DERIVED_FAMILIES, familyOf } from "../model/families.ts";
import { GENERATED_NOTICE } from "./emit-node.ts";
import { channelKey, endpointKey, pageKey, type ServerModel, variantLocation } from "./server-model.ts";

// The golden ledger of one server (spec/golden-ledger.md), and beside it the metadata the corpus bench
// needs to score per family: which family and label every entry stands for. Vulnerable rows are defects,
// safe rows not_defects with their why; supporting operations are not_defects too, so a finding there
// counts against the run. Two kinds of defect are derived rather than tabled: a security variant's 5xx on
// an unusual input (a real unhandled error beside the flaw) and, on a partially documented server, each
// operation the document leaves out.

export interface VariantMeta {
  id: string;
  family: string;
  label: "vulnerable" | "safe";
  domain: string;
  class: string;
  severity: string;
  locations: string[];
  knobs: Record<string, unknown>;
  documented: boolean;
}

export interface DerivedMeta {
  id: string;
  family: string;
  domain: string;
  class: string;
  location: string;
  /** The variant the derived defect sits beside. */
  variant?: string;
}

export interface SupportMeta {
  id: string;
  location: string;
  domain: string;
}

export interface ServerMeta {
  server: string;
  notice: string;
  variants: VariantMeta[];
  derived: DerivedMeta[];
  support: SupportMeta[];
}

export function buildMeta(model: ServerModel): ServerMeta {
  const variants: VariantMeta[] = model.variants.map(({ row, built, documented }) => {
    const family = familyOf(row.family);
    return {
      id: row.id,
      family: row.family,
      label: row.label,
      domain: family.domain,
      class: built.ledgerClass ?? family.ledgerClass,
      severity: row.severity,
      locations: [
        variantLocation(built),
        ...(built.alsoAt ?? []).map(endpointKey),
        ...(built.page?.places ?? []).map((place) =>
          "page" in place ? pageKey(place.page) : place.endpoint,
        ),
      ],
      knobs: row.knobs as Record<string, unknown>,
      documented,
    };
  });
  const derived: DerivedMeta[] = [];
  for (const { row, built } of model.variants) {
    if (built.collateral && row.label === "vulnerable") {
      derived.push({
        id: `${row.id}-5XX`,
        family: DERIVED_FAMILIES.collateral,
        domain: "api",
        class: built.collateral.class,
        location: endpointKey(built.collateral.at ?? built.endpoint),
        variant: row.id,
      });
    }
  }
  if (model.server.doc === "partial") {
    for (const { row, built, documented } of model.variants) {
      if (documented) continue;
      // A realtime variant's channel is not an operation a document could list; a page's GET is support.
      for (const endpoint of [
        ...(built.channel || built.page ? [] : [built.endpoint]),
        ...(built.alsoAt ?? []),
      ]) {
        derived.push({
          id: `UNDOC-${row.id}${endpoint === built.endpoint ? "" : `-${endpoint.method}`}`,
          family: DERIVED_FAMILIES.undocumentedEndpoint,
          domain: "api",
          class: "undocumented-endpoint",
          location: endpointKey(endpoint),
          variant: row.id,
        });
      }
    }
  }
  const support: SupportMeta[] = model.support.flatMap((op) =>
    (["security", "api"] as const).map((domain) => ({
      id: `${op.id}-${domain === "security" ? "SEC" : "API"}`,
      location: endpointKey(op.endpoint),
      domain,
    })),
  );
  return { server: model.server.name, notice: GENERATED_NOTICE, variants, derived, support };
}

export function emitLedger(model: ServerModel, meta: ServerMeta): string {
  const titles = new Map(model.variants.map((variant) => [variant.row.id, variant.built]));
  const defects: Record<string, unknown>[] = [];
  const notDefects: Record<string, unknown>[] = [];
  for (const variant of meta.variants) {
    const built = titles.get(variant.id)!;
    const locations = variant.locations.map((place): Record<string, string> => {
      if (place.startsWith(channelKey(""))) return { channel: place.slice(channelKey("").length) };
      if (place.startsWith(pageKey(""))) return { page: place.slice(pageKey("").length) };
      return { endpoint: place };
    });
    // Data variants also name the tables their flaw is about: a schema finding is placed at a table.
    for (const table of built.dataPlaces ?? []) locations.push({ table });
    if (variant.label === "vulnerable") {
      defects.push({
        id: variant.id,
        title: built.title,
        domain: variant.domain,
        class: variant.class,
        severity: variant.severity,
        locations,
        fixed_in: null,
      });
    } else {
      notDefects.push({
        id: variant.id,
        title: built.title,
        domain: variant.domain,
        class: variant.class,
        locations,
        why: built.why ?? "the look-alike is handled correctly",
      });
    }
  }
  for (const entry of meta.derived) {
    const collateral = entry.family === DERIVED_FAMILIES.collateral;
    defects.push({
      id: entry.id,
      title: collateral
        ? (titles.get(entry.variant!)?.collateral?.title ?? "An unusual input answers 500")
        : `${entry.location} is served but the document leaves it out`,
      domain: entry.domain,
      class: entry.class,
      severity: collateral ? "medium" : "low",
      locations: [{ endpoint: entry.location }],
      fixed_in: null,
    });
  }
  const supportById = new Map(model.support.map((op) => [op.id, op]));
  for (const entry of meta.support) {
    const op = supportById.get(entry.id.replace(/-(SEC|API)$/, ""))!;
    const looksLike = op.looksLike?.domain === entry.domain ? op.looksLike : undefined;
    notDefects.push({
      id: entry.id,
      title: `${op.endpoint.summary} (${entry.location}) is correct`,
      domain: entry.domain,
      ...(looksLike ? { class: looksLike.class } : {}),
      locations: [{ endpoint: entry.location }],
      why:
        looksLike?.why ??
        (op.variantId
          ? `an operation variant ${op.variantId} needs; it checks who asks and what it is given`
          : "an operation every corpus server has; it checks who asks and what it is given"),
    });
  }
  const header = `# ${GENERATED_NOTICE}\n# The golden ledger of corpus server ${model.server.name}; families and labels are in ${model.server.name}.variants.json.\n`;
  return (
    header +
    stringify(
      { ledger_version: 1, target: model.server.name, defects, not_defects: notDefects },
      { lineWidth: 0, aliasDuplicateObjects: false },
    )
  );
}
