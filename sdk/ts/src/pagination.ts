// Lists as openai-node makes them: `await client.items.list("posts")`
// gives the first page; `for await (const item of client.items.list("posts"))`
// walks every item, fetching the next page only when the loop reaches it
// (by offset until a page comes back short, or by cursor until there is
// none), as the Go SDK's iterators do (sdk/go/pages.go).

/** One page: its rows and how to fetch the next (undefined after the last). */
export interface Page<T> {
  rows: T[];
  next: (() => Promise<Page<T>>) | undefined;
}

/**
 * A list request: awaiting it gives the first page's answer (P);
 * iterating it with `for await` gives every row (T) of every page.
 */
export class PageRequest<P, T> implements PromiseLike<P>, AsyncIterable<T> {
  private first: Promise<Page<T> & { answer: P }> | undefined;

  constructor(private readonly fetchFirst: () => Promise<Page<T> & { answer: P }>) {}

  private start(): Promise<Page<T> & { answer: P }> {
    this.first ??= this.fetchFirst();
    return this.first;
  }

  then<R1 = P, R2 = never>(
    onfulfilled?: ((value: P) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.start().then((p) => p.answer).then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<P | R> {
    return this.then(undefined, onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<P> {
    return this.then().finally(onfinally);
  }

  /** Every row of every page, in order. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page: Page<T> | undefined = await this.start();
    while (page) {
      yield* page.rows;
      page = page.next ? await page.next() : undefined;
    }
  }

  /** Every row of every page in an array (mind the list's size). */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const row of this) out.push(row);
    return out;
  }
}

/** Pages of a list paged by limit and offset, until a page comes back short. */
export function offsetPages<P, T>(
  limit: number,
  offset: number,
  fetchPage: (limit: number, offset: number) => Promise<P>,
  rowsOf: (answer: P) => T[],
): PageRequest<P, T> {
  const load = async (at: number): Promise<Page<T> & { answer: P }> => {
    const answer = await fetchPage(limit, at);
    const rows = rowsOf(answer) ?? [];
    return { answer, rows, next: rows.length < limit ? undefined : () => load(at + rows.length) };
  };
  return new PageRequest(() => load(offset));
}

/** Pages of a list paged by cursor: each page names the next page's cursor, none after the last. */
export function cursorPages<P, T>(
  cursor: string | undefined,
  fetchPage: (cursor: string | undefined) => Promise<P>,
  rowsOf: (answer: P) => T[],
  nextOf: (answer: P) => string | undefined | null,
): PageRequest<P, T> {
  const load = async (c: string | undefined): Promise<Page<T> & { answer: P }> => {
    const answer = await fetchPage(c);
    const rows = rowsOf(answer) ?? [];
    const n = nextOf(answer);
    return { answer, rows, next: n ? () => load(n) : undefined };
  };
  return new PageRequest(() => load(cursor));
}
