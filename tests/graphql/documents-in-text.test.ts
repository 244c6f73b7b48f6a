import { print } from "graphql";
import { describe, expect, it } from "vitest";
import { sdlOfShapes, shapesFromDocuments } from "../../src/probes/graphql/document-shapes.ts";
import { graphqlDocumentsInText } from "../../src/probes/graphql/documents-in-text.ts";

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

describe("graphqlDocumentsInText", () => {
  it("reads operations from inline scripts, escaped bundle strings, tagged templates and encoded links", () => {
    const page = [
      "<script>",
      "function load(flag) {",
      "  const query = `query ListPastes {",
      '    pastes(public: ${flag}, title: "${title}") { id owner { name } }',
      "  }`;",
      "}",
      "</script>",
      '<a href="/graphql?query=query%20Burn%20%7B%20burn(id%3A%20${id})%20%7B%20title%20%7D%20%7D">burn</a>',
    ].join("\n");
    const bundle =
      'var d={kind:"Document",loc:{source:{body:"mutation Add($input: PasteInput!) {\\n  add(input: $input) { ...Parts }\\n}\\nfragment Parts on Paste { id title }"}}};' +
      "var m=gql`{ me { id } }`;var p={query:'{ health }'};";
    const documents = graphqlDocumentsInText(page + bundle).map((document) => oneLine(print(document)));
    expect(documents).toEqual([
      'query ListPastes { pastes(public: 0, title: "0") { id owner { name } } }',
      "mutation Add($input: PasteInput!) { add(input: $input) { ...Parts } }",
      "fragment Parts on Paste { id title }",
      "{ me { id } }",
      "{ health }",
      "query Burn { burn(id: 0) { title } }",
    ]);
  });

  it("leaves code and prose that only look like GraphQL", () => {
    const text = [
      "function query(sql) { return db.run(sql); }",
      "const mutation = (state) => { state.count += 1 };",
      "<p>A mutation (of the data) { rarely } happens; see the query {docs}.</p>",
      "const style = '{ color: red }'; const obj = { query: { id: 1 } };",
      "subscription.unsubscribe(); if (query) { run(query) }",
    ].join("\n");
    expect(graphqlDocumentsInText(text)).toEqual([]);
  });
});

describe("shapesFromDocuments", () => {
  it("keeps declared variable types, marks literal ones as guesses and names selections' types", () => {
    const documents = graphqlDocumentsInText(
      'gql`query A($id: ID!) { paste(id: $id) { id owner { name } } }` gql`mutation B { vote(up: true, weight: 2) }` gql`query C { search(term: "x") { ... on Paste { title } } }`',
    );
    const shapes = shapesFromDocuments(documents);
    const query = shapes.types.get("Query")!;
    expect(query.get("paste")?.arguments.get("id")).toEqual({ type: "ID!", guessed: false });
    expect(query.get("paste")?.returns).toBe("Paste");
    expect(query.get("search")?.returns).toBe("Paste");
    expect(shapes.types.get("Paste")?.get("owner")?.returns).toBe("Owner");
    expect(shapes.types.get("Paste")?.has("title")).toBe(true);
    const vote = shapes.types.get("Mutation")?.get("vote");
    expect(Object.fromEntries(vote?.arguments ?? [])).toEqual({
      up: { type: "Boolean", guessed: true },
      weight: { type: "Int", guessed: true },
    });
    expect(oneLine(sdlOfShapes(shapes))).toContain(
      "type Mutation { vote(up: Boolean, weight: Int): String }",
    );
  });
});
