import{a as r,b as o}from"./chunk-KI6RK2X6.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{r as RailroadAbnfModule,o as createRailroadAbnfServices};
