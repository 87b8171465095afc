/**
 * A raw-JSON prefilter for scans: the encoding holds this property name (as a key or a string). Its
 * own module, so light importers (the auth context, which the CLI's flag defaults read) do not
 * load the registry.
 */
export const mentions =
  (...properties: string[]) =>
  (encoded: string): boolean =>
    properties.some((p) => encoded.includes(`"${p}"`));
