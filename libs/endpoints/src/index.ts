export { gatewayRoutesOf, pathParameterNames, type Access, type ApiVersion, type Endpoint, type EndpointDeclaration, type GatewayRoute, type HttpMethod, type SuccessHeader, type SuccessResponse, type Upstream } from './endpoint';
export { defineEndpoints, servedPathOf, type EndpointCall, type EndpointGroup, type EndpointHandler, type EndpointRoutes } from './group';
export { component, componentNameOf, namedComponents } from './components';
export { FIRST_VERSION, publicPath } from './version';
