/** Discovery, OpenAPI and version endpoints under the API prefix. */
import type { FastifyInstance } from 'fastify';
import type { ResourceModel } from '../../api/model.js';
import { ApiError } from '../../api/errors.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, selfSubjectReviewGroupNames, selfSubjectReviewResourceList, versionInfo } from '../discovery.js';
import { listedGroupNames, listedResourceList } from '../listed-kinds.js';
import { openApiDocument, openApiIndex } from '../openapi.js';
import { swaggerDocument, swaggerProtobuf, swaggerProtobufType } from '../openapi-v2.js';

/** Whether an Accept header takes one of these media types. */
function accepts(accept: string | undefined, types: string[]): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => types.includes(part.split(';')[0]!.trim().toLowerCase()));
}

export function registerDiscoveryRoutes(app: FastifyInstance, prefix: string, models: ResourceModel[], packageVersion: string): void {
  const group = models[0]!.info.group;
  const json = (value: unknown) => JSON.stringify(value);
  // Built once: they change only with the code.
  const documents = {
    version: json(versionInfo(packageVersion)),
    api: json(apiVersions),
    core: json(listedResourceList('')),
    apis: json(apiGroupList(group)),
    group: json(apiGroup(group)),
    resources: json(apiResourceList(group, models.map((m) => m.info))),
    openapi: openApiDocument(models),
  };
  const openapi = json(documents.openapi);
  const openapiIndex = json(openApiIndex(group, documents.openapi));
  const swagger = json(swaggerDocument(documents.openapi));
  const swaggerPb = swaggerProtobuf(documents.openapi);
  const serve = (url: string, body: string) =>
    app.get(url, (_req, reply) => reply.type('application/json').send(body));
  serve(`${prefix}/version`, documents.version);
  serve(`${prefix}/api`, documents.api);
  serve(`${prefix}/api/v1`, documents.core);
  serve(`${prefix}/apis`, documents.apis);
  serve(`${prefix}/apis/${group}`, documents.group);
  serve(`${prefix}/apis/${group}/v1`, documents.resources);
  const otherGroups = [
    ...listedGroupNames.map((g) => [g, listedResourceList(g)] as const),
    ...selfSubjectReviewGroupNames.map((g) => [g, selfSubjectReviewResourceList(g)] as const),
  ];
  for (const [g, resources] of otherGroups) {
    serve(`${prefix}/apis/${g}`, json(apiGroup(g)));
    serve(`${prefix}/apis/${g}/v1`, json(resources));
  }
  serve(`${prefix}/openapi/v3`, openapiIndex);
  serve(`${prefix}/openapi/v3/apis/${group}/v1`, openapi);
  app.get(`${prefix}/openapi/v2`, (req, reply) => {
    if (accepts(req.headers.accept, ['application/json', 'application/*', '*/*'])) return reply.type('application/json').send(swagger);
    // Answered as application/octet-stream, as kube-openapi does: client-go cannot parse the `@` of the type it asks for.
    if (accepts(req.headers.accept, [swaggerProtobufType])) return reply.type('application/octet-stream').send(swaggerPb);
    throw new ApiError(406, 'NotAcceptable', `only the following media types are accepted: application/json, ${swaggerProtobufType}`);
  });
}
