import type http from "node:http";

// The pieces a test app with a multipart file upload needs: the operation as a document declares it, and
// the uploaded file read back from a request (Node's own FormData parser, the one `fetch` uses).

/** `POST path` taking one file in the multipart part `field`. */
export function uploadOperation(field: string): Record<string, unknown> {
  return {
    post: {
      requestBody: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              required: [field],
              properties: { [field]: { type: "string", format: "binary" } },
            },
          },
        },
      },
      responses: { "201": { description: "stored" } },
    },
  };
}

/** The file sent in part `field` of a multipart request, or undefined (no such part, or not a file). */
export async function uploadedFile(request: http.IncomingMessage, field: string): Promise<File | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const form = await new Response(Buffer.concat(chunks), {
    headers: { "content-type": request.headers["content-type"] ?? "" },
  })
    .formData()
    .catch(() => undefined);
  const file = form?.get(field);
  return file && typeof file !== "string" ? file : undefined;
}
