// Compiled by `npm run typecheck` (tsc --noEmit), never run: what a
// TypeScript user writes must type-check, and what is wrong must not.
import { Atrium, NotFoundError, type Item, type Run } from "../src/index.js";

export async function usage(sdk: Atrium): Promise<void> {
  const page = await sdk.items.list("posts", { limit: 10, q: "rye" });
  const first: Item | undefined = page.items[0];
  for await (const item of sdk.items.list("posts")) {
    const id: string = item.id;
    void id;
  }
  const run: Run = await sdk.runs.wait("r");
  void first;
  void run;

  // The escape hatch is typed by the generated document.
  const r = await sdk.request("get", "/api/v1/runs/{run_id}", { params: { run_id: "x" } });
  const state: string | undefined = r.data.run?.state;
  void state;
  // @ts-expect-error: no such route in the public document
  await sdk.request("get", "/api/v1/nowhere");
  // @ts-expect-error: the admin API is not the public document's
  await sdk.request("get", "/admin/v1/agencies");

  try {
    await sdk.items.get("posts", "x");
  } catch (e) {
    if (e instanceof NotFoundError) {
      const trace: string | undefined = e.traceId;
      void trace;
    }
  }
}
