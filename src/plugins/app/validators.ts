import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';

type Compile = (route: { httpPart?: string }) => unknown;
type Pool = (externalSchemas: unknown, options: AjvServerOptions) => Compile;
interface AjvServerOptions {
  customOptions?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Two ajv compilers: query strings, path parameters and headers are text, so their values
 * are coerced to the declared types (`?limit=5` is the integer 5); a JSON body already has
 * its types and is validated exactly as sent. Coercing a body would turn `true` into
 * `"true"` where a union allows a string first (form values), or `"123"` into 123.
 */
export function buildValidator(): ValidatorFactory {
  const pool = AjvCompiler() as unknown as Pool;
  const factory = (externalSchemas: unknown, options: AjvServerOptions): Compile => {
    const coercing = pool(externalSchemas, options);
    const exact = pool(externalSchemas, {
      ...options,
      customOptions: { ...options.customOptions, coerceTypes: false },
    });
    return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
  };
  return factory as unknown as ValidatorFactory;
}
