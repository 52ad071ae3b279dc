/**
 * What `promise` rejects with; throws when it resolves instead. With `type`, a rejection of
 * another kind is thrown on as it is (the test fails naming it).
 */
export async function rejection<T = Error>(
  promise: Promise<unknown>,
  type?: abstract new (...args: never[]) => T,
): Promise<T> {
  try {
    await promise;
  } catch (error) {
    if (type !== undefined && !(error instanceof type)) throw error;
    return error as T;
  }
  throw new Error('expected a rejection');
}
