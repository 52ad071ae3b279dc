/** The built-in tools' names, for load-time validation of `tools:` lists. */
export const BUILT_IN_TOOLS = [
  'file_read',
  'file_list',
  'file_write',
  'file_delete',
  'shell',
  'http_get',
  'http_post',
  'memory_get',
  'memory_set',
  'memory_search',
  'memory_delete',
] as const;
